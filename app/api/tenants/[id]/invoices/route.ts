import { billing } from "@/lib/api/contracts";
import { invoiceJson } from "@/lib/billing/invoice-json";
import { listInvoices } from "@/lib/billing/list-invoices";
import { route } from "@/lib/http/route";

export const GET = route(billing.listTenantInvoices, async ({ principal, params, query, reply }) => {
  const { data, nextCursor } = await listInvoices(principal, { ...query, tenantId: params.id });
  return reply(200, { data: data.map(invoiceJson), next_cursor: nextCursor });
});
