import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { conflict, invalidTransition, notFound } from "@/lib/errors";
import { balanceOf } from "./ledger";
import { invoiceLabel } from "./money";

/**
 * Operators refund (part of) a paid invoice to the tenant's balance: an SLA credit, a run lost to
 * hardware. Refunds of one invoice never add up to more than it was paid (checked under its row lock).
 */
export async function refundInvoice(actor: Actor, id: string, input: { amount_cents: number; reason: string }) {
  assertOperator(actor.principal);
  return db().$transaction(async (tx) => {
    const [inv] = await tx.$queryRaw<Array<{ status: string; tenant_id: string; amount_cents: bigint; number: number }>>`
      SELECT status, tenant_id, amount_cents, number FROM invoices WHERE id = ${id}::uuid FOR UPDATE`;
    if (!inv) throw notFound("Invoice");
    if (inv.status !== "paid") throw invalidTransition(`Only a paid invoice can be refunded; this one is ${inv.status}`);
    const [{ refunded }] = await tx.$queryRaw<[{ refunded: bigint }]>`
      SELECT COALESCE(sum(amount_cents), 0)::bigint AS refunded FROM ledger_entries WHERE invoice_id = ${id}::uuid AND kind = 'refund'`;
    const left = Number(inv.amount_cents) - Number(refunded);
    if (input.amount_cents > left)
      throw conflict(`At most ${left} cents of ${invoiceLabel(inv.number)} can still be refunded`, [
        { path: "amount_cents", message: `At most ${left}` },
      ]);
    const entry = await tx.ledgerEntry.create({
      data: {
        tenantId: inv.tenant_id,
        kind: "refund",
        amountCents: BigInt(input.amount_cents),
        invoiceId: id,
        description: `Refund on ${invoiceLabel(inv.number)}: ${input.reason}`,
        createdBy: actor.principal.label,
      },
    });
    await recordAudit(tx, actor, {
      action: "billing.refund",
      targetType: "invoice",
      targetId: id,
      tenantId: inv.tenant_id,
      details: { amount_cents: input.amount_cents, reason: input.reason },
    });
    return { entry, balance: await balanceOf(inv.tenant_id, tx), refundable: left - input.amount_cents };
  });
}
