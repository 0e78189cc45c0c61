import "server-only";
import { readFileSync } from "node:fs";
import path from "node:path";

const URL_TEMPLATE = "__GPUFORGE_URL__";
const VERIFY_TEMPLATE = "# __GPUFORGE_VERIFY_BUNDLE__";
const dir = () => path.join(process.cwd(), "lib", "agent-install");

/**
 * An installer script of lib/agent-install (install.sh for the agent; another bundle's installer the
 * same way), pointed at this control plane and given the shared verify_bundle function
 * (verify-bundle.sh) in place of its `# __GPUFORGE_VERIFY_BUNDLE__` line.
 */
function renderInstaller(file: string, controlPlaneUrl: string): string {
  const url = controlPlaneUrl.replace(/\/$/, "");
  if (!/^https?:\/\/[A-Za-z0-9.:[\]-]+(\/[A-Za-z0-9._~/-]*)?$/.test(url))
    throw new Error(`not a control plane URL the installer can embed: ${url}`);
  const script = readFileSync(path.join(dir(), file), "utf8");
  if (!script.includes(VERIFY_TEMPLATE)) throw new Error(`${file} does not check its bundle's signature (no ${VERIFY_TEMPLATE} line)`);
  return script.replace(URL_TEMPLATE, url).replace(VERIFY_TEMPLATE, readFileSync(path.join(dir(), "verify-bundle.sh"), "utf8").trimEnd());
}

/** The node installer (lib/agent-install/install.sh), pointed at this control plane. */
export function installScript(controlPlaneUrl: string): string {
  return renderInstaller("install.sh", controlPlaneUrl);
}
