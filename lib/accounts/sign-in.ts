import "server-only";
import { createHash } from "node:crypto";
import { issueChallenge, readChallenge } from "@/lib/auth/second-factor-challenge";
import { ADDRESS_POLICY, PAIR_POLICY, SECOND_FACTOR_POLICY } from "@/lib/auth/sign-in-throttle";
import { db } from "@/lib/db/client";
import { addressScope } from "@/lib/http/client-address";
import { queueAccountMail, wakeMailDeliverer } from "@/lib/mail/queue-account-mail";
import { publicUrl } from "@/lib/platform/public-url";
import { issueAccountToken } from "./account-tokens";
import { checkSecondFactor } from "./second-factor";
import { recordSignInEvent } from "./sign-in-history";
import { countAttempt, giveBack, verifyCredentials, type SignedInUser } from "@/lib/users/verify-credentials";

// Signing in, in one or two steps (next-auth's credentials provider calls these). Step one is the
// password, throttled as before (lib/users/verify-credentials). An account with two-factor sign-in
// then gets a challenge instead of a session; step two exchanges the challenge and a code for the
// session, throttled per account and per place. Either way the account's history records the
// attempt, and a sign-in from a place the account had not signed in from before is mailed to it.

export type SignInStep =
  | { ok: true; user: SignedInUser; twoFactor: boolean }
  | { ok: false; reason: "second_factor"; challenge: string }
  | { ok: false; reason: "invalid" | "disabled" | "unverified" | "challenge_expired" }
  | { ok: false; reason: "throttled"; retryAfterS: number };

export interface Visitor {
  address: string;
  userAgent: string | null;
}

export async function signInWithPassword(email: string, password: string, visitor: Visitor): Promise<SignInStep> {
  const r = await verifyCredentials(email, password, visitor.address, visitor.userAgent);
  if (!r.ok) {
    if (r.reason === "unverified") await resendVerification(r.user);
    return r.reason === "throttled" ? r : { ok: false, reason: r.reason };
  }
  if (r.secondFactor) {
    return {
      ok: false,
      reason: "second_factor",
      challenge: issueChallenge({ userId: r.user.id, sessionVersion: r.user.sessionVersion, newPlace: r.newPlace }),
    };
  }
  if (r.newPlace) await mailNewSignIn(r.user, visitor);
  return { ok: true, user: r.user, twoFactor: false };
}

export async function signInWithSecondFactor(challengeToken: string, code: string, visitor: Visitor): Promise<SignInStep> {
  const challenge = readChallenge(challengeToken);
  if (!challenge) return { ok: false, reason: "challenge_expired" };
  const keys = secondFactorKeys(challenge.userId, visitor.address);
  const gate = await countAttempt(keys, { address: ADDRESS_POLICY, account: SECOND_FACTOR_POLICY, pair: PAIR_POLICY }, false);
  if (!gate.allowed) {
    await recordSignInEvent(challenge.userId, "throttled", null, visitor).catch(() => {});
    return { ok: false, reason: "throttled", retryAfterS: Math.ceil(gate.retryAfterMs / 1000) };
  }
  const user = await db().user.findUnique({
    where: { id: challenge.userId },
    select: {
      id: true,
      email: true,
      name: true,
      role: true,
      tenantId: true,
      sessionVersion: true,
      disabledAt: true,
      totpEnabledAt: true,
      tenant: { select: { status: true } },
    },
  });
  // the password changed, the user was disabled or two-factor was reset since the challenge: start over
  if (!user || user.sessionVersion !== challenge.sessionVersion || !user.totpEnabledAt) return { ok: false, reason: "challenge_expired" };
  if (user.disabledAt || (user.tenant && user.tenant.status !== "active")) return { ok: false, reason: "disabled" };
  const method = await checkSecondFactor(user.id, code);
  if (!method) {
    await recordSignInEvent(user.id, "wrong_code", null, visitor);
    return { ok: false, reason: "invalid" };
  }
  await giveBack(keys);
  await db().user.update({ where: { id: user.id }, data: { lastLoginAt: new Date() } });
  await recordSignInEvent(user.id, "succeeded", method, visitor);
  const signedIn: SignedInUser = {
    id: user.id,
    email: user.email,
    name: user.name,
    role: user.role,
    tenantId: user.tenantId,
    sessionVersion: user.sessionVersion,
  };
  if (challenge.newPlace) await mailNewSignIn(signedIn, visitor);
  return { ok: true, user: signedIn, twoFactor: true };
}

function secondFactorKeys(userId: string, address: string) {
  const scope = addressScope(address).slice(0, 100);
  return {
    address: `ip:${scope}`,
    account: `2fa:${userId}`,
    pair: `pair:${createHash("sha256").update(`2fa\n${userId}\n${scope}`).digest("hex")}`,
  };
}

async function mailNewSignIn(user: SignedInUser, visitor: Visitor) {
  await queueAccountMail([
    {
      to: user.email,
      userId: user.id,
      tenantId: user.tenantId,
      data: {
        kind: "new_sign_in",
        at: new Date(),
        address: visitor.address,
        userAgent: visitor.userAgent,
        plane: user.role === "operator" ? "admin" : "dashboard",
      },
    },
  ]);
}

/** The right password for an unconfirmed sign-up: a fresh link goes to the address (within its hourly allowance). */
async function resendVerification(user: { id: string; email: string; tenantId: string | null }) {
  await db().$transaction(async (tx) => {
    const tenant = user.tenantId
      ? await tx.tenant.findUnique({ where: { id: user.tenantId }, select: { name: true, signupExpiresAt: true } })
      : null;
    if (!tenant?.signupExpiresAt) return;
    const ttl = Math.max(60_000, tenant.signupExpiresAt.getTime() - Date.now());
    const link = publicUrl(`/signup/verify?token=${await issueAccountToken(tx, user.id, "verify_email", ttl)}`);
    await queueAccountMail(
      [
        {
          to: user.email,
          userId: user.id,
          tenantId: user.tenantId,
          data: { kind: "verify_email", company: tenant.name, link, expiresHours: Math.max(1, Math.round(ttl / 3_600_000)) },
          secretLinks: [link],
        },
      ],
      tx,
    );
  });
  await wakeMailDeliverer();
}
