import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { invalidTransition, notFound } from "@/lib/errors";
import { closeInvoiceCheckout } from "./close-invoice-checkout";
import { findInvoice } from "./get-invoice";
import type { StripeConfig } from "./stripe";

/** Operators void a pending invoice (a mistake, a credit note); its usage can be invoiced again. */
export async function voidInvoice(actor: Actor, id: string, stripe?: StripeConfig) {
  assertOperator(actor.principal);
  await db().$transaction(async (tx) => {
    const [inv] = await tx.$queryRaw<
      Array<{ status: string; tenant_id: string }>
    >`SELECT status, tenant_id FROM invoices WHERE id = ${id}::uuid FOR UPDATE`;
    if (!inv) throw notFound("Invoice");
    if (inv.status !== "pending") throw invalidTransition(`A ${inv.status} invoice cannot be voided`);
    await tx.invoice.update({ where: { id }, data: { status: "void", voidedAt: new Date() } });
    const released = await tx.$executeRaw`UPDATE usage_events SET invoice_id = NULL WHERE invoice_id = ${id}::uuid`;
    await recordAudit(tx, actor, {
      action: "billing.invoice_voided",
      targetType: "invoice",
      targetId: id,
      tenantId: inv.tenant_id,
      details: { usage_events_released: released },
    });
  });
  await closeInvoiceCheckout(id, stripe);
  return (await findInvoice(id))!;
}
