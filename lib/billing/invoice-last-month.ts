import "server-only";
import { systemActorFor } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { generateInvoice } from "./generate-invoice";

/** The monthly run (cron, 1st of the month): one invoice per active tenant with usage, idempotent per tenant and period. */
export async function invoiceLastMonth(now = new Date(), only?: string[]) {
  const tenants = await db().tenant.findMany({
    where: { status: "active", billingMode: "invoice", ...(only ? { id: { in: only } } : {}) },
    select: { id: true },
  });
  const out = { created: 0, nothing: 0, already: 0 };
  for (const t of tenants) {
    try {
      await generateInvoice(systemActorFor("monthly invoicing"), t.id, {}, { now });
      out.created++;
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === "nothing_to_invoice") out.nothing++;
      else if (code === "conflict") out.already++;
      else throw e;
    }
  }
  return out;
}
