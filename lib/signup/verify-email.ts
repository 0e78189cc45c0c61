import "server-only";
import { consumeAccountToken, peekAccountToken, retireAccountTokens } from "@/lib/accounts/account-tokens";
import { systemActorFor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { rateLimited, validationFailed } from "@/lib/errors";
import { checkAccountPassword } from "@/lib/users/verify-credentials";

const actor = systemActorFor("email verification");

/**
 * The link in a verification mail was followed and the account's password typed on its page (a
 * mail scanner that fetches links verifies nothing): the address is verified, the sign-up no longer
 * expires, and the account may sign in. The token works once.
 *
 * The link proves the mailbox; the password proves who made the account. Both are asked for, or
 * whoever signs up with someone else's address (and a password of their own) would have the owner
 * confirm the account for them by clicking the link. A wrong password is 400 naming `password`,
 * counted like a sign-in attempt (429 past the allowance), and leaves the token usable: the owner
 * of the address who did not sign up discards the sign-up with the same link, or chooses a
 * password of their own through a reset.
 */
export async function verifyEmail(input: { token: string; password?: string }, visitor: { address: string }): Promise<{ email: string }> {
  const userId = await peekAccountToken(db(), input.token, "verify_email");
  // the page always sends it; an API client holding the mailbox's token may (API.md: `{token}`)
  if (input.password !== undefined) {
    const user = await db().user.findUniqueOrThrow({ where: { id: userId }, select: { email: true, passwordHash: true } });
    const check = await checkAccountPassword(user.email, user.passwordHash, input.password, visitor.address);
    if ("retryAfterS" in check) throw rateLimited(`Too many wrong passwords for this account: try again in ${check.retryAfterS} seconds`);
    if (!check.ok) throw validationFailed([{ path: "password", message: "This is not the password the account was created with" }]);
  }
  return db().$transaction(async (tx) => {
    // the same token (its hash is unique), now used: two confirmations with it cannot both pass
    await consumeAccountToken(tx, input.token, "verify_email");
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
      details: { email: user.email, password_confirmed: input.password !== undefined },
    });
    return { email: user.email };
  });
}
