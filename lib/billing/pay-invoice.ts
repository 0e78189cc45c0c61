import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { conflict, forbidden, invalidTransition, notFound } from "@/lib/errors";
import { closeInvoiceCheckout } from "./close-invoice-checkout";
import { findInvoice } from "./get-invoice";
import { balanceOf } from "./ledger";
import { invoiceLabel } from "./money";
import type { StripeConfig } from "./stripe";

/**
 * Pays a pending invoice: from the tenant's prepaid balance (the tenant or an operator), or as a
 * bank transfer an operator received. The tenant row lock serialises spending of one balance.
 */
export async function payInvoice(
  actor: Actor,
  id: string,
  input: { method: "balance" | "bank"; reference?: string },
  stripe?: StripeConfig,
) {
  const p = actor.principal;
  if (p.kind === "agent") throw forbidden("Agents do not pay invoices");
  await db().$transaction(async (tx) => {
    const found = await tx.invoice.findFirst({ where: { id, ...tenantScope(p) }, select: { tenantId: true } });
    if (!found) throw notFound("Invoice");
    if (input.method === "bank" && p.kind !== "operator") throw forbidden("Only operators record bank payments");
    await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${found.tenantId}::uuid FOR UPDATE`;
    const [inv] = await tx.$queryRaw<
      Array<{ status: string; amount_cents: bigint; number: number }>
    >`SELECT status, amount_cents, number FROM invoices WHERE id = ${id}::uuid FOR UPDATE`;
    if (inv!.status !== "pending") throw invalidTransition(`This invoice is ${inv!.status}`);
    const amount = Number(inv!.amount_cents);
    if (input.method === "balance") {
      const balance = await balanceOf(found.tenantId, tx);
      if (balance < amount)
        throw conflict(`The prepaid balance (${balance} cents) does not cover ${amount} cents`, [
          { path: "method", message: "Insufficient balance" },
        ]);
      await tx.ledgerEntry.create({
        data: {
          tenantId: found.tenantId,
          kind: "invoice_payment",
          amountCents: BigInt(-amount),
          invoiceId: id,
          description: `Payment of ${invoiceLabel(inv!.number)}`,
          createdBy: p.label,
        },
      });
    }
    await tx.invoice.update({
      where: { id },
      data: { status: "paid", paidAt: new Date(), paymentMethod: input.method, paymentReference: input.reference ?? null },
    });
    await recordAudit(tx, actor, {
      action: "billing.invoice_paid",
      targetType: "invoice",
      targetId: id,
      tenantId: found.tenantId,
      details: { method: input.method, reference: input.reference ?? null, amount_cents: amount },
    });
  });
  await closeInvoiceCheckout(id, stripe);
  return (await findInvoice(id))!;
}
