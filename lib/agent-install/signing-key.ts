import "server-only";
import { bundleSigningKeyText, env, type Env } from "@/lib/env";
import { readSigningKey, type SigningKey } from "./bundle-signing";

// The configured bundle signing key (BUNDLE_SIGNING_KEY or BUNDLE_SIGNING_KEY_FILE), read once per
// process. Null when none is configured: the bundles are then not served at all (an installer
// has nothing to check an unsigned bundle against), and the console says which variable to set.

let cached: { text: string; key: SigningKey } | undefined;

export function bundleSigningKey(e: Env = env()): SigningKey | null {
  const text = bundleSigningKeyText(e);
  if (!text) return null;
  if (cached?.text !== text) cached = { text, key: readSigningKey(text) };
  return cached.key;
}

/** The command an operator runs on a node, with this control plane's address and public key. */
export function installCommand(controlPlaneUrl: string, key: SigningKey, keyArgument = "--key gf_…"): string {
  return `curl -fsSL ${controlPlaneUrl.replace(/\/$/, "")}/install.sh | sudo sh -s -- --signing-key ${key.publicKey} ${keyArgument}`;
}
