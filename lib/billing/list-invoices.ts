import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { forbidden, notFound } from "@/lib/errors";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { invoiceInclude } from "./invoice-json";
import { assertTenantVisible } from "./ledger";

export async function listInvoices(p: Principal, opts: { tenantId?: string; status?: string; limit: number; cursor?: string }) {
  if (opts.tenantId) assertTenantVisible(p, opts.tenantId);
  else if (p.kind !== "operator") throw forbidden("Operators list every tenant's invoices");
  if (opts.tenantId && !(await db().tenant.findUnique({ where: { id: opts.tenantId }, select: { id: true } }))) throw notFound("Tenant");
  const rows = await db().invoice.findMany({
    where: {
      ...(opts.tenantId ? { tenantId: opts.tenantId } : {}),
      ...(opts.status ? { status: opts.status } : {}),
      ...afterCursor(decodeCursor(opts.cursor)),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
    include: invoiceInclude,
  });
  return page(rows, opts.limit);
}
