import "server-only";
import { openAccountSecret } from "@/lib/auth/account-secrets";
import { hashRecoveryCode, looksLikeRecoveryCode } from "@/lib/auth/recovery-codes";
import { normaliseCode, totpStep } from "@/lib/auth/totp";
import type { Tx } from "@/lib/db/client";
import { db } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { USE_RECOVERY_CODE, USE_TOTP_STEP } from "./two-factor-statements";

export type SecondFactorMethod = "totp" | "recovery_code";

/**
 * Checks a second factor for a user with two-factor sign-in on: a code from their authenticator
 * (accepted once: its time step must be after the last one used, written in the same statement
 * that checks it, so a code seen over someone's shoulder or replayed cannot sign in again) or one
 * of their recovery codes (each works once). Answers which one it was, or null.
 */
export async function checkSecondFactor(userId: string, raw: string, tx?: Tx): Promise<SecondFactorMethod | null> {
  const q = tx ?? db();
  const user = await q.user.findUnique({ where: { id: userId }, select: { totpSecretCiphertext: true } });
  if (!user?.totpSecretCiphertext) return null;
  const code = normaliseCode(raw);
  if (/^\d{6}$/.test(code)) {
    const secret = openAccountSecret("totp", userId, user.totpSecretCiphertext);
    if (secret === null) return null;
    const step = totpStep(secret, code, Date.now());
    if (step === null) return null;
    const used = await run(q, USE_TOTP_STEP, [userId, step]);
    return used.length ? "totp" : null;
  }
  if (looksLikeRecoveryCode(raw)) {
    const used = await run(q, USE_RECOVERY_CODE, [userId, hashRecoveryCode(raw)]);
    return used.length ? "recovery_code" : null;
  }
  return null;
}
