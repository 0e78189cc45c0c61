import { Secret, TOTP } from "otpauth";

// Time-based one-time passwords (RFC 6238) for two-factor sign-in, pure: the `otpauth` library
// computes HOTP/TOTP; this file fixes our parameters (HMAC-SHA1, 6 digits, 30-second steps: what
// every authenticator app reads from an otpauth:// URI) and the rules around them: a code is
// accepted one step either side of now (clock drift, RFC 6238 §5.2), and a step once accepted
// never again (the caller stores the step this answers and refuses any step not after it).

const TOTP_PERIOD_S = 30;
const TOTP_DIGITS = 6;
/** steps either side of now that still count */
const WINDOW = 1;

export interface TotpOptions {
  algorithm?: "SHA1" | "SHA256" | "SHA512";
  digits?: number;
  period?: number;
}

function totp(secretBase32: string, o: TotpOptions = {}) {
  return new TOTP({
    secret: Secret.fromBase32(secretBase32),
    algorithm: o.algorithm ?? "SHA1",
    digits: o.digits ?? TOTP_DIGITS,
    period: o.period ?? TOTP_PERIOD_S,
  });
}

/** A new secret: 20 random bytes (RFC 4226 §4's recommended length), base32 as apps take it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The otpauth:// URI an authenticator app enrols from (what the QR code holds). */
export function totpUri(secretBase32: string, issuer: string, account: string): string {
  return new TOTP({
    issuer,
    label: account,
    secret: Secret.fromBase32(secretBase32),
    algorithm: "SHA1",
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_S,
  }).toString();
}

/** The code for a moment (tests, and the RFC's vectors). */
export function totpCode(secretBase32: string, atMs: number, o: TotpOptions = {}): string {
  return totp(secretBase32, o).generate({ timestamp: atMs });
}

/**
 * The time step a code answers at `atMs` (within one step of it), or null when it answers none.
 * The caller accepts it only if the step is after the last one the account used.
 */
export function totpStep(secretBase32: string, code: string, atMs: number, o: TotpOptions = {}): number | null {
  const digits = o.digits ?? TOTP_DIGITS;
  if (!new RegExp(`^\\d{${digits}}$`).test(code)) return null;
  const delta = totp(secretBase32, o).validate({ token: code, timestamp: atMs, window: WINDOW });
  if (delta === null) return null;
  return Math.floor(atMs / 1000 / (o.period ?? TOTP_PERIOD_S)) + delta;
}

/** A code as people type it: spaces and dashes dropped ("123 456" is "123456"). */
export function normaliseCode(raw: string): string {
  return raw.replace(/[\s-]/g, "");
}
