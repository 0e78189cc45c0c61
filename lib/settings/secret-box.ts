import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Settings secrets at rest: AES-256-GCM with a fresh 12-byte IV per value, stored as
 * "v1:<iv>:<tag>:<ciphertext>" (base64). The setting's key is bound as additional data, so a
 * ciphertext copied into another row does not decrypt. Pure apart from the random IV.
 */
export function sealSecret(key: Buffer, name: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(name, "utf8"));
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return `v1:${iv.toString("base64")}:${cipher.getAuthTag().toString("base64")}:${ct.toString("base64")}`;
}

/** The plaintext of a sealed value; throws when the key, the name or the bytes do not match. */
export function openSecret(key: Buffer, name: string, sealed: string): string {
  const [version, iv, tag, ct] = sealed.split(":");
  if (version !== "v1" || !iv || !tag || ct === undefined) throw new Error("not a sealed settings secret");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64"));
  decipher.setAAD(Buffer.from(name, "utf8"));
  decipher.setAuthTag(Buffer.from(tag, "base64"));
  return Buffer.concat([decipher.update(Buffer.from(ct, "base64")), decipher.final()]).toString("utf8");
}
