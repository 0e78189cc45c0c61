import { createHash, randomInt } from "node:crypto";

// Recovery codes for two-factor sign-in: ten per enrolment, shown once, stored as SHA-256 (each is
// 50 random bits, so a plain hash is enough), each good for one sign-in. Written in two groups of
// five from an alphabet without look-alike characters, so a person can copy them from paper.

const ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"; // 31 characters: no i, l, o, 0, 1
const RECOVERY_CODE_COUNT = 10;

export function newRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    const chars = Array.from({ length: 10 }, () => ALPHABET[randomInt(ALPHABET.length)]).join("");
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** Whether typed input has the shape of a recovery code (spaces, dashes and case ignored). */
export function looksLikeRecoveryCode(raw: string): boolean {
  return /^[a-z0-9]{10}$/.test(normaliseRecoveryCode(raw));
}

function normaliseRecoveryCode(raw: string): string {
  return raw.toLowerCase().replace(/[\s-]/g, "");
}

export function hashRecoveryCode(raw: string): string {
  return createHash("sha256")
    .update(`gpuforge-recovery:${normaliseRecoveryCode(raw)}`)
    .digest("hex");
}
