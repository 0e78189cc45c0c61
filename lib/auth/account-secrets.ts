import { createHash, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { authSecret } from "@/lib/env";
import { openSecret, sealSecret } from "@/lib/settings/secret-box";

// Secrets of accounts at rest and in mail. Tokens mailed in links are 32 random bytes; only their
// SHA-256 is stored (a database leak gives no usable link). Two-factor secrets and the real bodies
// of mail that carries a link must be read back by the server, so they are sealed with AES-256-GCM
// (lib/settings/secret-box) under a key derived from NEXTAUTH_SECRET with HKDF, one key per use.
// Rotating NEXTAUTH_SECRET therefore also retires pending mail and every enrolled authenticator
// (users then sign in with a recovery code and enrol again): SECURITY.md says so.

type SecretUse = "totp" | "mail";

const keys = new Map<SecretUse, Buffer>();

function keyFor(use: SecretUse): Buffer {
  let k = keys.get(use);
  if (!k) {
    k = Buffer.from(hkdfSync("sha256", authSecret(), "gpuforge account secrets", `gpuforge ${use} v1`, 32));
    keys.set(use, k);
  }
  return k;
}

/** Seals `plaintext` for `use`, bound to `name` (a user id, a mail's id): a ciphertext copied to another row does not open. */
export function sealAccountSecret(use: SecretUse, name: string, plaintext: string): string {
  return sealSecret(keyFor(use), `${use}:${name}`, plaintext);
}

/** The plaintext of a sealed value, or null when it does not open (another key, another row). */
export function openAccountSecret(use: SecretUse, name: string, sealed: string): string | null {
  try {
    return openSecret(keyFor(use), `${use}:${name}`, sealed);
  } catch {
    return null;
  }
}

/** A token for a link: 32 random bytes, base64url (43 characters). */
export function newLinkToken(): string {
  return randomBytes(32).toString("base64url");
}

/** What is stored of a token: its SHA-256, hex. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Whether a string looks like one of our link tokens (refused early, before any lookup). */
export function looksLikeLinkToken(v: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(v);
}

/** Constant-time equality of two strings. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
