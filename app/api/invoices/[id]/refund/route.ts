import { billing } from "@/lib/api/contracts";
import { refundInvoice } from "@/lib/billing/refund-invoice";
import { ledgerEntryJson } from "@/lib/billing/ledger";
import { route } from "@/lib/http/route";

export const POST = route(billing.refundInvoice, async ({ actor, params, body, reply }) => {
  const { entry, balance, refundable } = await refundInvoice(actor, params.id, body);
  return reply(201, { entry: ledgerEntryJson(entry, balance), balance_cents: balance, refundable_cents: refundable });
});
