import "server-only";
import { readFileSync } from "node:fs";
import path from "node:path";

const TEMPLATE = "__GPUFORGE_URL__";

/** The node installer (lib/agent-install/install.sh), pointed at this control plane. */
export function installScript(controlPlaneUrl: string): string {
  const url = controlPlaneUrl.replace(/\/$/, "");
  if (!/^https?:\/\/[A-Za-z0-9.:[\]-]+(\/[A-Za-z0-9._~/-]*)?$/.test(url))
    throw new Error(`not a control plane URL the installer can embed: ${url}`);
  return readFileSync(path.join(process.cwd(), "lib", "agent-install", "install.sh"), "utf8").replace(TEMPLATE, url);
}
