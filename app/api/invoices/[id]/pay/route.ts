import { billing } from "@/lib/api/contracts";
import { invoiceJson } from "@/lib/billing/invoice-json";
import { payInvoice } from "@/lib/billing/pay-invoice";
import { route } from "@/lib/http/route";

export const POST = route(billing.payInvoice, async ({ actor, params, body, reply }) =>
  reply(200, { invoice: invoiceJson(await payInvoice(actor, params.id, body)) }),
);
