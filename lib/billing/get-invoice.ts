import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import { invoiceInclude } from "./invoice-json";

/** An invoice with its lines, unscoped (for the use cases that already checked the caller): null when there is none. */
export const findInvoice = (id: string) => db().invoice.findUnique({ where: { id }, include: invoiceInclude });

export async function getInvoiceOrThrow(p: Principal, id: string) {
  const inv = await findInvoice(id);
  if (!inv) throw notFound("Invoice");
  if (p.kind === "agent" || (p.kind === "tenant" && inv.tenantId !== p.tenantId)) throw notFound("Invoice");
  return inv;
}
