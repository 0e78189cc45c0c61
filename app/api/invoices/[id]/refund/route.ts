import { billing } from "@/lib/api/contracts";
import { refundInvoice } from "@/lib/billing/invoices";
import { json, route } from "@/lib/http/route";

export const POST = route(billing.refundInvoice, async ({ actor, params, body }) => {
  const { entry, balance, refundable } = await refundInvoice(actor, params.id, body);
  return json(201, {
    entry: { id: entry.id.toString(), kind: "refund", amount_cents: Number(entry.amountCents), balance_after_cents: balance, description: entry.description, invoice_id: entry.invoiceId, created_by: entry.createdBy, created_at: entry.createdAt.toISOString() },
    balance_cents: balance,
    refundable_cents: refundable,
  });
});
