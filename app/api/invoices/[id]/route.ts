import { billing } from "@/lib/api/contracts";
import { getInvoiceOrThrow } from "@/lib/billing/get-invoice";
import { invoiceJson } from "@/lib/billing/invoice-json";
import { route } from "@/lib/http/route";

export const GET = route(billing.getInvoice, async ({ principal, params, reply }) =>
  reply(200, { invoice: invoiceJson(await getInvoiceOrThrow(principal, params.id)) }),
);
