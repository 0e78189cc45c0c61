import "server-only";
import { consumeAddressLimit } from "@/lib/accounts/address-limit";
import { assertAcceptablePassword } from "@/lib/accounts/check-password";
import { consumeAccountToken, issueAccountToken, retireAccountTokens } from "@/lib/accounts/account-tokens";
import { answerNoSoonerThan } from "@/lib/accounts/answer-floor";
import { hashPassword } from "@/lib/auth/password";
import { systemActorFor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { queueAccountMail, wakeMailDeliverer } from "@/lib/mail/queue-account-mail";
import { RECENT_ACCOUNT_MAIL } from "@/lib/mail/statements";
import { publicUrl } from "@/lib/platform/public-url";

const actor = systemActorFor("password reset");
const RESETS_PER_EMAIL_PER_HOUR = 5;
/** how long a reset request takes to answer, either way (the work with an account takes a few milliseconds more) */
export const RESET_ANSWER_MS = 250;

/**
 * Someone asks for a password reset for `email`. The answer never says whether the address has an
 * account, and the work before answering is of one kind either way (one short transaction): with an
 * account (enabled), its owner is mailed a link that works once and expires; without one, nothing
 * is sent. The answer comes RESET_ANSWER_MS after the request either way: the paths' work is alike
 * but not equal (a token and a mail written against a lookup), and the difference was measurable.
 */
export async function requestPasswordReset(email: string): Promise<void> {
  await answerNoSoonerThan(RESET_ANSWER_MS, () => resetRequest(email));
}

async function resetRequest(email: string): Promise<void> {
  await consumeAddressLimit("reset", email, RESETS_PER_EMAIL_PER_HOUR, 3600, "Too many reset requests for this address; try again later");
  await db().$transaction(async (tx) => {
    const user = await tx.user.findUnique({ where: { email }, select: { id: true, tenantId: true, disabledAt: true } });
    if (!user || user.disabledAt) {
      // the same kind of work as queuing a mail, so the two answers take alike
      await run(tx, RECENT_ACCOUNT_MAIL, [email, ["password_reset"]]);
      return;
    }
    const minutes = env().PASSWORD_RESET_MINUTES;
    const link = publicUrl(`/password-reset/confirm?token=${await issueAccountToken(tx, user.id, "reset_password", minutes * 60_000)}`);
    await queueAccountMail(
      [{ to: email, userId: user.id, tenantId: user.tenantId, data: { kind: "password_reset", link, minutes }, secretLinks: [link] }],
      tx,
    );
  });
  await wakeMailDeliverer();
}

/**
 * A reset link's new password: checked like any new password (the link still works when it is
 * refused), stored, and every browser session of the user ended (API keys stay). Following a link
 * sent to the address also proves the address, so an unconfirmed sign-up is confirmed by it.
 * Two-factor sign-in, when enrolled, stays on: a reset by email is not a way around it.
 */
export async function confirmPasswordReset(token: string, password: string, visitor: { address: string }): Promise<{ email: string }> {
  const result = await db().$transaction(
    async (tx) => {
      const userId = await consumeAccountToken(tx, token, "reset_password");
      const before = await tx.user.findUniqueOrThrow({
        where: { id: userId },
        select: { email: true, tenantId: true, emailVerifiedAt: true },
      });
      await assertAcceptablePassword(password, { email: before.email });
      const user = await tx.user.update({
        where: { id: userId },
        data: {
          passwordHash: await hashPassword(password),
          sessionVersion: { increment: 1 },
          emailVerifiedAt: before.emailVerifiedAt ?? new Date(),
        },
        select: { id: true, email: true, tenantId: true, role: true },
      });
      await retireAccountTokens(tx, userId, ["reset_password"]);
      if (!before.emailVerifiedAt && user.tenantId) {
        await retireAccountTokens(tx, userId, ["verify_email", "discard_signup"]);
        await tx.tenant.updateMany({ where: { id: user.tenantId, origin: "signup" }, data: { signupExpiresAt: null } });
      }
      await queueAccountMail(
        [
          {
            to: user.email,
            userId,
            tenantId: user.tenantId,
            data: { kind: "password_changed", how: "reset", at: new Date(), address: visitor.address },
          },
        ],
        tx,
      );
      await recordAudit(tx, actor, {
        action: "user.password_reset",
        targetType: "user",
        targetId: userId,
        tenantId: user.tenantId,
        details: { email: user.email, sessions_ended: true, ...(before.emailVerifiedAt ? {} : { email_verified: true }) },
      });
      return { email: user.email };
    },
    { timeout: 15_000, maxWait: 15_000 },
  );
  await wakeMailDeliverer();
  return result;
}
