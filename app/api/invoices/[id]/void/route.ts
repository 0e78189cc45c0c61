import { billing } from "@/lib/api/contracts";
import { invoiceJson } from "@/lib/billing/invoice-json";
import { voidInvoice } from "@/lib/billing/void-invoice";
import { route } from "@/lib/http/route";

export const POST = route(billing.voidInvoice, async ({ actor, params, reply }) =>
  reply(200, { invoice: invoiceJson(await voidInvoice(actor, params.id)) }),
);
