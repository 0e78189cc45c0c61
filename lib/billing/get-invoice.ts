import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { db } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import { invoiceInclude } from "./invoice-json";

/** An invoice with its lines, unscoped (for the use cases that already checked the caller): null when there is none. */
export const findInvoice = (id: string) => db().invoice.findUnique({ where: { id }, include: invoiceInclude });

export async function getInvoiceOrThrow(p: Principal, id: string) {
  if (p.kind !== "operator" && p.kind !== "tenant") throw notFound("Invoice");
  const inv = await db().invoice.findFirst({ where: { id, ...tenantScope(p) }, include: invoiceInclude });
  if (!inv) throw notFound("Invoice");
  return inv;
}
