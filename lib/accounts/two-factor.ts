import "server-only";
import QRCode from "qrcode";
import { sealAccountSecret, openAccountSecret } from "@/lib/auth/account-secrets";
import { verifyPassword } from "@/lib/auth/password";
import type { Actor, Principal } from "@/lib/auth/principal";
import { hashRecoveryCode, newRecoveryCodes } from "@/lib/auth/recovery-codes";
import { newTotpSecret, normaliseCode, totpStep, totpUri } from "@/lib/auth/totp";
import { recordAudit } from "@/lib/audit/record-audit";
import { db, type Tx } from "@/lib/db/client";
import { conflict, forbidden, notFound, rateLimited, validationFailed } from "@/lib/errors";
import { queueAccountMail, wakeMailDeliverer } from "@/lib/mail/queue-account-mail";
import { SECOND_FACTOR_POLICY } from "@/lib/auth/sign-in-throttle";
import { productName } from "@/lib/platform/public-url";
import { effectiveSettings } from "@/lib/settings/settings";
import { countAttempt, giveBack, type ThrottleKeys } from "@/lib/users/verify-credentials";
import { checkSecondFactor } from "./second-factor";

// Two-factor sign-in (TOTP, RFC 6238) for the signed-in user: enrol (a secret shown as a QR code
// and as text, confirmed with a first code), recovery codes (shown once, replaced on request),
// turning it off (password and a code), and an admin resetting it for a user who lost their device.

/** An enrolment in progress expires: the secret shown must be confirmed within this. */
const PENDING_TTL_MS = 15 * 60_000;

function sessionUser(actor: Actor): { userId: string; label: string; plane: "admin" | "dashboard" } {
  const p = actor.principal;
  const userId = "userId" in p ? p.userId : undefined;
  if (!userId || p.keyId || (p.kind !== "operator" && p.kind !== "tenant"))
    throw forbidden("Two-factor sign-in is set up from a signed-in browser session");
  return { userId, label: p.label, plane: p.kind === "operator" ? "admin" : "dashboard" };
}

/**
 * A code typed in the account's settings (new recovery codes, turning two-factor off) counts
 * against the account's second-factor counter, the one sign-in's second step uses: a stolen session
 * cannot walk the code space here either. Refused while it waits (429); a right code gives the
 * attempt back.
 */
async function gateSettingsCode(userId: string): Promise<ThrottleKeys> {
  const keys = { address: `2fa:settings:${userId}`, account: `2fa:${userId}`, pair: `pair:2fa-settings:${userId}` };
  const gate = await countAttempt(
    keys,
    { address: SECOND_FACTOR_POLICY, account: SECOND_FACTOR_POLICY, pair: SECOND_FACTOR_POLICY },
    false,
  );
  if (!gate.allowed) throw rateLimited(`Too many wrong codes; try again in ${Math.ceil(gate.retryAfterMs / 1000)} s`);
  return keys;
}

/** Whether the user's role must sign in with a second factor under the operators' policy. */
async function twoFactorRequiredFor(role: string): Promise<boolean> {
  const { twoFactor } = await effectiveSettings();
  return (role === "operator" && twoFactor.operators) || (role === "tenant_admin" && twoFactor.tenant_admins);
}

/** Starts (or restarts) an enrolment: a new secret, kept sealed as pending until confirmed. */
export async function beginTwoFactorEnrolment(actor: Actor): Promise<{ secret: string; uri: string; qrSvg: string }> {
  const { userId } = sessionUser(actor);
  const user = await db().user.findUniqueOrThrow({ where: { id: userId }, select: { email: true, totpEnabledAt: true } });
  if (user.totpEnabledAt) throw conflict("Two-factor sign-in is already on; turn it off first to enrol another device");
  const secret = newTotpSecret();
  await db().user.update({
    where: { id: userId },
    data: { totpPendingCiphertext: sealAccountSecret("totp", `${userId}:pending`, secret), totpPendingAt: new Date() },
  });
  return enrolmentView(secret, user.email);
}

/** The pending enrolment's secret again (the page reloaded), or null when there is none or it expired. */
export async function pendingTwoFactorEnrolment(userId: string, email: string) {
  const user = await db().user.findUnique({ where: { id: userId }, select: { totpPendingCiphertext: true, totpPendingAt: true } });
  if (!user?.totpPendingCiphertext || !user.totpPendingAt || user.totpPendingAt.getTime() < Date.now() - PENDING_TTL_MS) return null;
  const secret = openAccountSecret("totp", `${userId}:pending`, user.totpPendingCiphertext);
  return secret ? enrolmentView(secret, email) : null;
}

async function enrolmentView(secret: string, email: string) {
  const uri = totpUri(secret, productName(), email);
  const qrSvg = await QRCode.toString(uri, { type: "svg", errorCorrectionLevel: "M", margin: 1, width: 200 });
  return { secret, uri, qrSvg };
}

/**
 * The password and the first code confirm the device: two-factor sign-in is on, and ten recovery
 * codes are made (returned once). The password, because a session alone (left open, or stolen)
 * must not be able to put a device of someone else's between the owner and their account.
 */
export async function confirmTwoFactorEnrolment(
  actor: Actor,
  input: { code: string; password: string },
): Promise<{ recoveryCodes: string[] }> {
  const { userId, label, plane } = sessionUser(actor);
  const codes = newRecoveryCodes();
  await db().$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<
      Array<{
        email: string;
        tenant_id: string | null;
        password_hash: string | null;
        pending: string | null;
        pending_at: Date | null;
        enabled: Date | null;
      }>
    >`
      SELECT email, tenant_id, password_hash, totp_pending_ciphertext AS pending, totp_pending_at AS pending_at, totp_enabled_at AS enabled
        FROM users WHERE id = ${userId}::uuid FOR UPDATE`;
    if (!row) throw notFound("User");
    if (row.enabled) throw conflict("Two-factor sign-in is already on");
    if (!(await verifyPassword(row.password_hash, input.password)))
      throw validationFailed([{ path: "password", message: "This is not your password" }]);
    const secret =
      row.pending && row.pending_at && row.pending_at.getTime() >= Date.now() - PENDING_TTL_MS
        ? openAccountSecret("totp", `${userId}:pending`, row.pending)
        : null;
    if (!secret) throw validationFailed([{ path: "code", message: "This set-up expired; start again to get a new QR code" }]);
    const step = totpStep(secret, normaliseCode(input.code), Date.now());
    if (step === null)
      throw validationFailed([{ path: "code", message: "That code does not match; check the device's clock and type the current code" }]);
    await tx.user.update({
      where: { id: userId },
      data: {
        totpSecretCiphertext: sealAccountSecret("totp", userId, secret),
        totpEnabledAt: new Date(),
        totpLastStep: BigInt(step),
        totpPendingCiphertext: null,
        totpPendingAt: null,
      },
    });
    await replaceRecoveryCodes(tx, userId, codes);
    await notify(tx, userId, row.email, row.tenant_id, "enabled", label, plane);
    await recordAudit(tx, actor, { action: "user.two_factor_enabled", targetType: "user", targetId: userId, tenantId: row.tenant_id });
  });
  await wakeMailDeliverer();
  return { recoveryCodes: codes };
}

/** New recovery codes (the old ones stop working), after a current code or a recovery code. */
export async function regenerateRecoveryCodes(actor: Actor, rawCode: string): Promise<{ recoveryCodes: string[] }> {
  const { userId, label, plane } = sessionUser(actor);
  const keys = await gateSettingsCode(userId);
  const codes = newRecoveryCodes();
  await db().$transaction(async (tx) => {
    const user = await lockedUser(tx, userId);
    if (!user.totp_enabled_at) throw conflict("Two-factor sign-in is off");
    if (!(await checkSecondFactor(userId, rawCode, tx))) throw validationFailed([{ path: "code", message: "That code does not match" }]);
    await replaceRecoveryCodes(tx, userId, codes);
    await notify(tx, userId, user.email, user.tenant_id, "recovery_codes", label, plane);
    await recordAudit(tx, actor, {
      action: "user.recovery_codes_replaced",
      targetType: "user",
      targetId: userId,
      tenantId: user.tenant_id,
    });
  });
  await giveBack(keys);
  await wakeMailDeliverer();
  return { recoveryCodes: codes };
}

/** Turns two-factor sign-in off: the password and a current code (or a recovery code); refused where the role requires it. */
export async function disableTwoFactor(actor: Actor, input: { password: string; code: string }): Promise<void> {
  const { userId, label, plane } = sessionUser(actor);
  const keys = await gateSettingsCode(userId);
  await db().$transaction(async (tx) => {
    const user = await lockedUser(tx, userId);
    if (!user.totp_enabled_at) throw conflict("Two-factor sign-in is already off");
    if (await twoFactorRequiredFor(user.role))
      throw forbidden("Your organisation's operators require two-factor sign-in for your role; it cannot be turned off");
    if (!(await verifyPassword(user.password_hash, input.password)))
      throw validationFailed([{ path: "password", message: "This is not your password" }]);
    if (!(await checkSecondFactor(userId, input.code, tx))) throw validationFailed([{ path: "code", message: "That code does not match" }]);
    await clearTwoFactor(tx, userId);
    await notify(tx, userId, user.email, user.tenant_id, "disabled", label, plane);
    await recordAudit(tx, actor, { action: "user.two_factor_disabled", targetType: "user", targetId: userId, tenantId: user.tenant_id });
  });
  await giveBack(keys);
  await wakeMailDeliverer();
}

/**
 * An operator (any user) or a tenant admin (a user of their own tenant, not themselves) resets the
 * two-factor sign-in of someone who lost their device. The user's sessions end; they sign in with
 * the password alone and enrol again (at once, where their role requires it). Mailed and audited.
 */
export async function resetTwoFactor(actor: Actor, targetUserId: string): Promise<void> {
  const p: Principal = actor.principal;
  if (p.kind !== "operator" && !(p.kind === "tenant" && p.role === "tenant_admin"))
    throw forbidden("Operators and tenant admins reset two-factor sign-in");
  if ("userId" in p && p.userId === targetUserId) throw forbidden("Turn your own two-factor sign-in off from your account page");
  await db().$transaction(async (tx) => {
    const user = await tx.user.findFirst({
      where: { id: targetUserId, ...(p.kind === "tenant" ? { tenantId: p.tenantId } : {}) },
      select: { email: true, tenantId: true, role: true, totpEnabledAt: true },
    });
    if (!user) throw notFound("User");
    if (!user.totpEnabledAt) throw conflict("This user has no two-factor sign-in to reset");
    await clearTwoFactor(tx, targetUserId);
    await tx.user.update({ where: { id: targetUserId }, data: { sessionVersion: { increment: 1 } } });
    await notify(tx, targetUserId, user.email, user.tenantId, "reset", p.label, user.role === "operator" ? "admin" : "dashboard");
    await recordAudit(tx, actor, {
      action: "user.two_factor_reset",
      targetType: "user",
      targetId: targetUserId,
      tenantId: user.tenantId,
      details: { email: user.email, sessions_ended: true },
    });
  });
  await wakeMailDeliverer();
}

async function lockedUser(tx: Tx, userId: string) {
  const [u] = await tx.$queryRaw<
    Array<{ email: string; role: string; tenant_id: string | null; password_hash: string; totp_enabled_at: Date | null }>
  >`SELECT email, role, tenant_id, password_hash, totp_enabled_at FROM users WHERE id = ${userId}::uuid FOR UPDATE`;
  if (!u) throw notFound("User");
  return u;
}

async function clearTwoFactor(tx: Tx, userId: string) {
  await tx.user.update({
    where: { id: userId },
    data: { totpSecretCiphertext: null, totpEnabledAt: null, totpLastStep: null, totpPendingCiphertext: null, totpPendingAt: null },
  });
  await tx.userRecoveryCode.deleteMany({ where: { userId } });
}

async function replaceRecoveryCodes(tx: Tx, userId: string, codes: string[]) {
  await tx.userRecoveryCode.deleteMany({ where: { userId } });
  await tx.userRecoveryCode.createMany({ data: codes.map((c) => ({ userId, codeHash: hashRecoveryCode(c) })) });
}

function notify(
  tx: Tx,
  userId: string,
  email: string,
  tenantId: string | null,
  change: "enabled" | "disabled" | "reset" | "recovery_codes",
  by: string,
  plane: "admin" | "dashboard",
) {
  return queueAccountMail([{ to: email, userId, tenantId, data: { kind: "two_factor_changed", change, at: new Date(), by, plane } }], tx);
}

/** What the account page shows of a user's two-factor sign-in. */
export async function twoFactorStatus(userId: string) {
  const [user, left] = await Promise.all([
    db().user.findUniqueOrThrow({ where: { id: userId }, select: { totpEnabledAt: true, role: true } }),
    db().userRecoveryCode.count({ where: { userId, usedAt: null } }),
  ]);
  return { enabledAt: user.totpEnabledAt, recoveryCodesLeft: left, required: await twoFactorRequiredFor(user.role) };
}
