import "server-only";
import type { z } from "zod";
import type { Actor, Principal } from "@/lib/auth/principal";
import { assertOperator } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db, pool, type Tx } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { forbidden, notFound } from "@/lib/errors";
import { oneOf } from "@/lib/vocabulary";
import { enforcePrepaidBalances } from "./meter";
import { LEDGER_KINDS, type ledgerEntrySchema } from "./schemas";
import { LEDGER_PAGE } from "./statements";

/** A tenant's balance is the sum of its ledger, never stored anywhere else. */
export async function balanceOf(tenantId: string, tx?: Tx): Promise<number> {
  const q = tx ?? db();
  const { _sum } = await q.ledgerEntry.aggregate({ where: { tenantId }, _sum: { amountCents: true } });
  return Number(_sum.amountCents ?? 0);
}

export function assertTenantVisible(p: Principal, tenantId: string) {
  if (p.kind === "agent") throw forbidden("Billing is for operators and tenants");
  if (p.kind === "tenant" && p.tenantId !== tenantId) throw notFound("Tenant");
}

/** Operators credit a tenant's prepaid balance (a wire received, a goodwill credit). Tenants never credit themselves. */
export async function depositFunds(actor: Actor, tenantId: string, amountCents: number, description?: string) {
  assertOperator(actor.principal);
  const entry = await db().$transaction(async (tx) => {
    const t = await tx.tenant.findUnique({ where: { id: tenantId }, select: { id: true } });
    if (!t) throw notFound("Tenant");
    const e = await tx.ledgerEntry.create({
      data: {
        tenantId,
        kind: "deposit",
        amountCents: BigInt(amountCents),
        description: description ?? "Deposit recorded by an operator",
        createdBy: actor.principal.label,
      },
    });
    await recordAudit(tx, actor, {
      action: "billing.deposit",
      targetType: "tenant",
      targetId: tenantId,
      tenantId,
      details: { amount_cents: amountCents, description: description ?? null },
    });
    return e;
  });
  // a tenant blocked for billing can run again at once
  await enforcePrepaidBalances();
  return entry;
}

/** The ledger, newest first, with the running balance after each entry. */
export async function listTransactions(p: Principal, tenantId: string, opts: { limit: number; cursor?: string }) {
  assertTenantVisible(p, tenantId);
  if (!(await db().tenant.findUnique({ where: { id: tenantId }, select: { id: true } }))) throw notFound("Tenant");
  const before = opts.cursor && /^\d+$/.test(opts.cursor) ? opts.cursor : null;
  const rows = await run(pool(), LEDGER_PAGE, [tenantId, before, opts.limit + 1]);
  const data = rows.slice(0, opts.limit).map((r) => ({
    id: r.id,
    kind: oneOf(LEDGER_KINDS, r.kind, "ledger_entries.kind"),
    amount_cents: Number(r.amount_cents),
    balance_after_cents: Number(r.balance_after),
    description: r.description,
    invoice_id: r.invoice_id,
    created_by: r.created_by,
    created_at: r.created_at.toISOString(),
  }));
  return { data, nextCursor: rows.length > opts.limit ? data[data.length - 1]!.id : null };
}

/** One ledger entry as the API shows it. */
export function ledgerEntryJson(
  e: { id: bigint; kind: string; amountCents: bigint; description: string; invoiceId: string | null; createdBy: string; createdAt: Date },
  balanceAfter: number | null,
): z.input<typeof ledgerEntrySchema> {
  return {
    id: e.id.toString(),
    kind: e.kind as (typeof LEDGER_KINDS)[number],
    amount_cents: Number(e.amountCents),
    balance_after_cents: balanceAfter,
    description: e.description,
    invoice_id: e.invoiceId,
    created_by: e.createdBy,
    created_at: e.createdAt.toISOString(),
  };
}
