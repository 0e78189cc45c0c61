import { createHash, randomBytes } from "node:crypto";

// API keys look like `gf_` + 43 base62 characters (~256 bits). Only the SHA-256 of the whole key
// is stored; its first 12 characters (the prefix) are kept to recognise it in lists and logs.

const KEY_PREFIX = "gf_";
const DISPLAY_PREFIX_LENGTH = 12;
const BODY_LENGTH = 43;
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH}}$`);

export function generateApiKey(): string {
  let body = "";
  // Rejection sampling keeps every character uniformly distributed.
  while (body.length < BODY_LENGTH) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && body.length < BODY_LENGTH) body += ALPHABET[byte % 62];
    }
  }
  return KEY_PREFIX + body;
}

export function isWellFormedApiKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}
