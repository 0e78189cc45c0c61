import { billing } from "@/lib/api/contracts";
import { generateInvoice } from "@/lib/billing/generate-invoice";
import { invoiceJson } from "@/lib/billing/invoice-json";
import { route } from "@/lib/http/route";

export const POST = route(billing.createInvoice, async ({ actor, params, body, reply }) =>
  reply(201, { invoice: invoiceJson(await generateInvoice(actor, params.id, body)) }),
);
