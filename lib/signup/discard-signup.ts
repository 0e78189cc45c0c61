import "server-only";
import { consumeAccountToken } from "@/lib/accounts/account-tokens";
import { systemActorFor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db, pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { inTransaction } from "@/lib/db/transaction";
import { logger } from "@/lib/logger";
import { validationFailed } from "@/lib/errors";
import { EXPIRED_SIGNUPS } from "@/lib/accounts/statements";

/**
 * The owner of an address discards an unconfirmed sign-up someone else made with it (the link in
 * the "someone tried to sign up" mail, or the verification link itself, whose page offers this to
 * whoever does not know the account's password): the tenant and its user are removed, so the owner
 * can sign up themselves. A sign-up already verified is not touched.
 */
export async function discardSignup(token: string): Promise<void> {
  await db().$transaction(async (tx) => {
    const userId = await consumeAccountToken(tx, token, ["discard_signup", "verify_email"]);
    const user = await tx.user.findUniqueOrThrow({
      where: { id: userId },
      select: { email: true, emailVerifiedAt: true, tenantId: true, tenant: { select: { name: true, signupExpiresAt: true } } },
    });
    if (user.emailVerifiedAt || !user.tenantId || !user.tenant?.signupExpiresAt)
      throw validationFailed([{ path: "token", message: "This account was confirmed meanwhile and can no longer be discarded here" }]);
    await tx.user.delete({ where: { id: userId } });
    await tx.tenant.delete({ where: { id: user.tenantId } });
    await recordAudit(tx, systemActorFor("sign-up discarded by its address's owner"), {
      action: "tenant.signup_discarded",
      targetType: "tenant",
      targetId: user.tenantId,
      details: { name: user.tenant.name, email: user.email },
    });
  });
}

/**
 * Removes unverified sign-ups past their expiry (the sweep). Each goes in a savepoint of its own:
 * one that something now refers to (an operator made it a key, say) stays, and is logged.
 */
export async function expireSignups(batch = 100): Promise<{ removed: number; kept: number }> {
  return inTransaction(
    async (c) => {
      const rows = await run(c, EXPIRED_SIGNUPS, [batch]);
      let removed = 0;
      for (const t of rows) {
        await c.query("SAVEPOINT signup");
        try {
          await c.query("DELETE FROM users WHERE tenant_id = $1 AND email_verified_at IS NULL", [t.id]);
          await c.query("DELETE FROM tenants WHERE id = $1", [t.id]);
          await c.query(
            `INSERT INTO audit_log (actor_kind, actor_id, tenant_id, action, target_type, target_id, details)
           VALUES ('system', NULL, NULL, 'tenant.signup_expired', 'tenant', $1, $2::jsonb)`,
            [t.id, JSON.stringify({ by: "sign-up expiry", name: t.name })],
          );
          await c.query("RELEASE SAVEPOINT signup");
          removed++;
        } catch (e) {
          await c.query("ROLLBACK TO SAVEPOINT signup");
          // looked at again tomorrow, so a few that stay never crowd out the others
          await c.query("UPDATE tenants SET signup_expires_at = now() + interval '1 day' WHERE id = $1", [t.id]);
          logger.warn("an expired sign-up is referred to and stays", { tenant: t.id, error: String(e) });
        }
      }
      return { removed, kept: rows.length - removed };
    },
    { pool: pool() },
  );
}
