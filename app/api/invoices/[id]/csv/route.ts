import { billing } from "@/lib/api/contracts";
import { getInvoiceOrThrow } from "@/lib/billing/get-invoice";
import { invoiceCsv } from "@/lib/billing/invoice-documents";
import { route } from "@/lib/http/route";

export const GET = route(billing.invoiceCsv, async ({ principal, params, send }) => {
  const { filename, body } = invoiceCsv(await getInvoiceOrThrow(principal, params.id));
  return send(200, body, { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="${filename}"` });
});
