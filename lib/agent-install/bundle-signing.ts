import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";

// Signed bundles: what a node installs (the agent; the Slurm bridge ships a second bundle the same
// way) is signed by the control plane with an Ed25519 key of its configuration, and the installer
// checks the signature with the public key the operator gives it in the install command, before it
// unpacks a byte.
//
// The threat: a bundle that is not the one this control plane built. The installer used to fetch a
// SHA-256 from the same server as the bundle, which proves only that the two downloads agree:
// whoever can change what that server hands out (a local user who fills the bundle cache first, a
// caching proxy or mirror in between, a process that serves the wrong file) changes both. A
// signature is made with a key that is never served, and is checked against a key that came with
// the command, not with the download. The installer keeps the key it was given, so an upgrade is
// checked against the same key.
//
// What is signed is not the bytes alone but a statement naming the bundle: kind, architecture and
// SHA-256 (signedStatement), so one bundle's signature never vouches for another kind or
// architecture. The installer builds the same statement from what it downloaded and expects.
// Pure: no configuration read here (lib/agent-install/signing-key reads it).

export interface SigningKey {
  privateKey: KeyObject;
  /** the public key as installers take it: base64 of its DER SubjectPublicKeyInfo (MCowBQYDK2VwAyEA…) */
  publicKey: string;
}

/** The public key's form on an install command line: base64 of the 44-byte DER SubjectPublicKeyInfo. */
export const PUBLIC_KEY_PATTERN = /^MCowBQYDK2VwAyEA[A-Za-z0-9+/]{43}=$/;

/** The statement a bundle's signature covers (install scripts build it byte for byte the same). */
export function signedStatement(kind: string, arch: string, sha256: string): Buffer {
  if (!/^[a-z][a-z0-9-]*$/.test(kind) || !/^[a-z0-9_]+$/.test(arch) || !/^[0-9a-f]{64}$/.test(sha256))
    throw new Error(`not a bundle to sign: ${kind} ${arch} ${sha256}`);
  return Buffer.from(`gpuforge-bundle-v1\nkind=${kind}\narch=${arch}\nsha256=${sha256}\n`);
}

/** The 64-byte Ed25519 signature of a bundle's statement. */
export function signBundle(key: SigningKey, kind: string, arch: string, sha256: string): Buffer {
  return sign(null, signedStatement(kind, arch, sha256), key.privateKey);
}

export function verifyBundle(publicKey: string, kind: string, arch: string, sha256: string, signature: Uint8Array): boolean {
  const key = createPublicKey({ key: Buffer.from(publicKey, "base64"), format: "der", type: "spki" });
  return verify(null, signedStatement(kind, arch, sha256), key, signature);
}

/**
 * The Ed25519 private key from its configured text: PEM (PKCS#8, as `openssl genpkey -algorithm
 * ed25519` writes it; `\n` escapes allowed, for an environment variable on one line) or the base64
 * of its DER. Throws, saying why, for anything else.
 */
export function readSigningKey(text: string): SigningKey {
  const trimmed = text.trim().replace(/\\n/g, "\n");
  let privateKey: KeyObject;
  try {
    privateKey = trimmed.startsWith("-----BEGIN")
      ? createPrivateKey({ key: trimmed, format: "pem" })
      : createPrivateKey({ key: Buffer.from(trimmed, "base64"), format: "der", type: "pkcs8" });
  } catch {
    throw new Error("is not a private key (PEM or base64 DER, e.g. `openssl genpkey -algorithm ed25519`)");
  }
  if (privateKey.asymmetricKeyType !== "ed25519") throw new Error(`must be an Ed25519 key, not ${privateKey.asymmetricKeyType}`);
  const publicKey = createPublicKey(privateKey).export({ type: "spki", format: "der" }).toString("base64");
  return { privateKey, publicKey };
}
