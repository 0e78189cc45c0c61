import "server-only";
import type { OperatorPrincipal, TenantPrincipal } from "@/lib/auth/principal";
import { MIN_PASSWORD_LENGTH } from "@/lib/auth/password";
import { db } from "@/lib/db/client";
import { listSignIns } from "./sign-in-history";
import { pendingTwoFactorEnrolment, twoFactorStatus } from "./two-factor";

/** The account page's view model: who is signed in, their second factor, and their recent sign-ins. */
export async function accountPage(p: OperatorPrincipal | TenantPrincipal) {
  const userId = p.userId!;
  const user = await db().user.findUniqueOrThrow({
    where: { id: userId },
    select: { email: true, name: true, role: true, createdAt: true, lastLoginAt: true },
  });
  const [twoFactor, pending, signIns] = await Promise.all([
    twoFactorStatus(userId),
    pendingTwoFactorEnrolment(userId, user.email),
    listSignIns(p, userId, { limit: 25 }),
  ]);
  return {
    user,
    twoFactor,
    pending,
    signIns: signIns.data,
    mustEnrol: Boolean(p.mustEnrolTwoFactor),
    passwordMinLength: MIN_PASSWORD_LENGTH,
  };
}
