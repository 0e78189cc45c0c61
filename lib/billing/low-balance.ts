import "server-only";
import { db, pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { queueAccountMail, wakeMailDeliverer } from "@/lib/mail/queue-account-mail";
import { formatDuration } from "./money";
import { balanceOutlook } from "./usage";
import { CLAIM_LOW_BALANCE_WARNING, CLEAR_LOW_BALANCE_WARNING, LOW_BALANCE_CANDIDATES } from "./low-balance-statements";

/**
 * Warns prepaid tenants by mail, once per episode, when their balance runs low (under a day of the
 * current spend) or out; a deposit that brings it back to a comfortable level ends the episode, so
 * the next low balance is announced again. The claim is one statement, so two instances sweeping
 * at once send one warning.
 */
export async function warnLowBalances(batch = 500): Promise<{ warned: number; cleared: number }> {
  const candidates = await run(pool(), LOW_BALANCE_CANDIDATES, [batch]);
  let warned = 0;
  let cleared = 0;
  for (const c of candidates) {
    const outlook = await balanceOutlook(c.id);
    if (outlook.level === "ok") {
      if (c.warned) cleared += (await run(pool(), CLEAR_LOW_BALANCE_WARNING, [c.id])).length;
      continue;
    }
    if (c.warned) continue;
    const claimed = await db().$transaction(async (tx) => {
      const [row] = await run(tx, CLAIM_LOW_BALANCE_WARNING, [c.id]);
      if (!row) return false;
      const tenant = await tx.tenant.findUniqueOrThrow({
        where: { id: c.id },
        select: { billingEmail: true, users: { where: { role: "tenant_admin", disabledAt: null }, select: { email: true }, take: 20 } },
      });
      const to = [...new Set([tenant.billingEmail, ...tenant.users.map((u) => u.email)].filter((e): e is string => Boolean(e)))];
      const lastsFor = outlook.zero_at ? formatDuration(Date.parse(outlook.zero_at) - Date.now()) : null;
      await queueAccountMail(
        to.map((email) => ({
          to: email,
          tenantId: c.id,
          data: {
            kind: "low_balance" as const,
            balanceCents: outlook.balance_cents - outlook.unbilled_cents,
            lastsFor,
            empty: outlook.level === "empty",
          },
        })),
        tx,
      );
      return true;
    });
    if (claimed) warned++;
  }
  if (warned > 0) await wakeMailDeliverer();
  return { warned, cleared };
}
