import "server-only";
import { consumeAccountToken, retireAccountTokens } from "@/lib/accounts/account-tokens";
import { systemActorFor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";

const actor = systemActorFor("email verification");

/**
 * The link in a verification mail was followed (and its page's button pressed: mail scanners
 * that fetch links do not verify anything): the address is verified, the sign-up no longer
 * expires, and the account may sign in. The token works once.
 */
export async function verifyEmail(token: string): Promise<{ email: string }> {
  return db().$transaction(async (tx) => {
    const userId = await consumeAccountToken(tx, token, "verify_email");
    const user = await tx.user.update({
      where: { id: userId },
      data: { emailVerifiedAt: new Date() },
      select: { email: true, tenantId: true },
    });
    // verified once and for all: the other links of the sign-up (a second verify, a discard) stop working
    await retireAccountTokens(tx, userId, ["verify_email", "discard_signup"]);
    if (user.tenantId) await tx.tenant.updateMany({ where: { id: user.tenantId, origin: "signup" }, data: { signupExpiresAt: null } });
    await recordAudit(tx, actor, {
      action: "user.email_verified",
      targetType: "user",
      targetId: userId,
      tenantId: user.tenantId,
      details: { email: user.email },
    });
    return { email: user.email };
  });
}
