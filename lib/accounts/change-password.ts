import "server-only";
import { assertAcceptablePassword } from "@/lib/accounts/check-password";
import { hashPassword, verifyPassword } from "@/lib/auth/password";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { forbidden, validationFailed } from "@/lib/errors";
import { queueAccountMail, wakeMailDeliverer } from "@/lib/mail/queue-account-mail";

/**
 * Any signed-in user changes their own password: the current one is asked for (a session left open
 * on someone's desk is not enough to take the account), the new one checked like every new password.
 * Every browser session of the user ends, this one included; API keys stay. The user is mailed.
 */
export async function changeOwnPassword(actor: Actor, input: { current_password: string; password: string }, visitor: { address: string }) {
  const p = actor.principal;
  const userId = "userId" in p ? p.userId : undefined;
  if (!userId || p.keyId) throw forbidden("Change your password from a signed-in browser session");
  const user = await db().user.findUniqueOrThrow({ where: { id: userId }, select: { email: true, passwordHash: true, tenantId: true } });
  if (!(await verifyPassword(user.passwordHash, input.current_password)))
    throw validationFailed([{ path: "current_password", message: "This is not your current password" }]);
  if (input.password === input.current_password)
    throw validationFailed([{ path: "password", message: "Choose a password you have not used here" }]);
  await assertAcceptablePassword(input.password, { email: user.email });
  const passwordHash = await hashPassword(input.password);
  await db().$transaction(async (tx) => {
    await tx.user.update({ where: { id: userId }, data: { passwordHash, sessionVersion: { increment: 1 } } });
    await queueAccountMail(
      [
        {
          to: user.email,
          userId,
          tenantId: user.tenantId,
          data: { kind: "password_changed", how: "changed", at: new Date(), address: visitor.address },
        },
      ],
      tx,
    );
    await recordAudit(tx, actor, {
      action: "user.password_changed",
      targetType: "user",
      targetId: userId,
      tenantId: user.tenantId,
      details: { sessions_ended: true },
    });
  });
  await wakeMailDeliverer();
}
