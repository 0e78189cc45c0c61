import "server-only";
import { agentBundle, BUNDLE_ARCH, type AgentBundle } from "./agent-bundle";
import { signBundle } from "./bundle-signing";
import { bundleSigningKey } from "./signing-key";

// The bundles nodes install, each served as /install/<kind>-linux-<arch>.tar.gz with its Ed25519
// signature beside it (<…>.tar.gz.sig, lib/agent-install/bundle-signing). A new kind of bundle (the
// Slurm bridge's) is one more entry here; its installer checks it with the same shell function
// (lib/agent-install/verify-bundle.sh).

const BUNDLES: Record<string, () => Promise<AgentBundle>> = {
  agent: () => agentBundle("agent"),
  "slurm-bridge": () => agentBundle("slurm-bridge"),
};

export type BundleFile =
  | { kind: "bundle"; bundle: AgentBundle }
  | { kind: "signature"; signature: Buffer; bundle: AgentBundle }
  | { kind: "not_found"; message: string }
  | { kind: "unsigned" };

/** Parses a requested file name: which bundle, and whether its signature is asked for. */
function parseBundleFile(file: string): { bundle: string; arch: string; signature: boolean } | null {
  const m = /^([a-z][a-z0-9-]*)-linux-([a-z0-9_]+)\.tar\.gz(\.sig)?$/.exec(file);
  return m ? { bundle: m[1]!, arch: m[2]!, signature: Boolean(m[3]) } : null;
}

/** What /install/<file> answers with. */
export async function bundleFile(file: string): Promise<BundleFile> {
  const want = parseBundleFile(file);
  if (!want || !Object.hasOwn(BUNDLES, want.bundle))
    return { kind: "not_found", message: `Bundles are named <${Object.keys(BUNDLES).join("|")}>-linux-<arch>.tar.gz` };
  if (want.arch !== BUNDLE_ARCH)
    return { kind: "not_found", message: `This control plane serves bundles for ${BUNDLE_ARCH} nodes, not ${want.arch}` };
  const key = bundleSigningKey();
  if (!key) return { kind: "unsigned" };
  const bundle = await BUNDLES[want.bundle]!();
  if (!want.signature) return { kind: "bundle", bundle };
  return { kind: "signature", bundle, signature: signBundle(key, want.bundle, want.arch, bundle.sha256) };
}
