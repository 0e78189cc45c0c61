import "server-only";
import type { z } from "zod";
import type { Prisma } from "@/lib/generated/prisma/client";
import { publicUrl } from "@/lib/platform/public-url";
import { oneOf } from "@/lib/vocabulary";
import { gpuHours, invoiceLabel, isNegligibleLine } from "./money";
import { INVOICE_STATUSES, PAYMENT_METHODS, type invoiceJsonSchema, type invoiceLineSchema } from "./schemas";

export const invoiceInclude = {
  lines: { orderBy: [{ gpuType: "asc" as const }, { description: "asc" as const }] },
} satisfies Prisma.InvoiceInclude;
type InvoiceRow = Prisma.InvoiceGetPayload<{ include: typeof invoiceInclude }>;

/** Without Stripe, an invoice is paid on the tenant's local payment page (prepaid balance) or recorded by an operator. */
export const localPaymentUrl = (id: string) => publicUrl(`/dashboard/billing/invoices/${id}`);

export function invoiceJson(inv: InvoiceRow): z.input<typeof invoiceJsonSchema> {
  const byType = new Map<string, Omit<z.input<typeof invoiceLineSchema>, "gpu_hours">>();
  for (const l of inv.lines) {
    if (isNegligibleLine(l.gpuSeconds, l.amountCents)) continue;
    const g = byType.get(l.gpuType) ?? { gpu_type: l.gpuType, gpu_seconds: 0, amount_cents: 0, jobs: [] };
    g.gpu_seconds += Number(l.gpuSeconds);
    g.amount_cents += Number(l.amountCents);
    g.jobs.push({
      job_id: l.jobId,
      endpoint_id: l.endpointId,
      reservation_id: l.reservationId,
      covered_by_reservation_id: l.coveredByReservationId,
      description: l.description,
      gpu_seconds: Number(l.gpuSeconds),
      amount_cents: Number(l.amountCents),
    });
    byType.set(l.gpuType, g);
  }
  return {
    id: inv.id,
    number: invoiceLabel(inv.number),
    tenant_id: inv.tenantId,
    period_start: inv.periodStart.toISOString(),
    period_end: inv.periodEnd.toISOString(),
    amount_cents: Number(inv.amountCents),
    status: oneOf(INVOICE_STATUSES, inv.status, "invoices.status"),
    payment_url: inv.status === "pending" ? (inv.stripeUrl ?? localPaymentUrl(inv.id)) : null,
    payment_method: inv.paymentMethod === null ? null : oneOf(PAYMENT_METHODS, inv.paymentMethod, "invoices.payment_method"),
    paid_at: inv.paidAt?.toISOString() ?? null,
    created_at: inv.createdAt.toISOString(),
    lines: [...byType.values()].map((g) => ({ ...g, gpu_hours: gpuHours(g.gpu_seconds) })),
  };
}
