import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { lockPrismaTransaction } from "@/lib/db/locks";
import { conflict, isUniqueViolation, notFound, nothingToInvoice } from "@/lib/errors";
import { attachStripeCheckout } from "./attach-stripe-checkout";
import { findInvoice } from "./get-invoice";
import { logger } from "@/lib/logger";
import { queueInvoiceEmail } from "./invoice-email";
import { accrueRunningUsage } from "./meter";
import { invoiceLabel, isNegligibleLine, lastFullMonth } from "./money";
import type { StripeConfig } from "./stripe";

/**
 * Invoices a tenant's usage for a period (default: the last full month, UTC). Running work is
 * billed up to the period's end first, so it is included; usage already invoiced never is again.
 * Numbers are sequential without gaps. With Stripe configured the invoice gets a Checkout link;
 * its payment link is emailed to the tenant's billing address when an email server is set.
 */
export async function generateInvoice(
  actor: Actor,
  tenantId: string,
  input: { period_start?: string; period_end?: string },
  opts: { now?: Date; stripe?: StripeConfig } = {},
) {
  assertOperator(actor.principal);
  const now = opts.now ?? new Date();
  const month = lastFullMonth(now);
  const start = input.period_start ? new Date(input.period_start) : month.start;
  const end = input.period_end ? new Date(input.period_end) : input.period_start ? now : month.end;
  if (!(end > start))
    throw conflict("The period must end after it starts", [{ path: "period_end", message: "Must be after period_start" }]);
  if (!(await db().tenant.findUnique({ where: { id: tenantId }, select: { id: true } }))) throw notFound("Tenant");
  await accrueRunningUsage({ tenantId, until: end < now ? end : now, prepaidEveryS: 0, invoiceEveryS: 0 });

  let invoiceId: string;
  try {
    invoiceId = await db().$transaction(async (tx) => {
      await lockPrismaTransaction(tx, "invoices");
      const existing = await tx.invoice.findFirst({
        where: { tenantId, periodStart: start, periodEnd: end, status: { not: "void" } },
        select: { number: true },
      });
      if (existing)
        throw conflict(`This period is already invoiced (${invoiceLabel(existing.number)})`, [
          { path: "period_start", message: "Already invoiced" },
        ]);
      // one line per job, per endpoint (all its replicas' time together), per reservation (all its nodes' time) and per pod (all its runs)
      const usage = await tx.$queryRaw<
        Array<{
          id: string;
          job_id: string | null;
          endpoint_id: string | null;
          reservation_id: string | null;
          pod_id: string | null;
          covered_by_reservation_id: string | null;
          subject_name: string;
          gpu_type: string;
          gpu_count: number;
          gpu_seconds: bigint;
          amount_cents: bigint;
        }>
      >`
        SELECT u.id, u.job_id, u.endpoint_id, u.reservation_id, u.pod_id, u.covered_by_reservation_id,
               COALESCE(j.name, 'Endpoint ' || e.name, 'Pod ' || p.name, 'Reservation ' || left(rv.id::text, 8) || ' (' || rv.node_count || ' whole nodes, ' || to_char(rv.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') || ' UTC)') AS subject_name,
               u.gpu_type, u.gpu_count, u.gpu_seconds, u.amount_cents
          FROM usage_events u LEFT JOIN jobs j ON j.id = u.job_id LEFT JOIN endpoints e ON e.id = u.endpoint_id LEFT JOIN reservations rv ON rv.id = u.reservation_id LEFT JOIN pods p ON p.id = u.pod_id
         WHERE u.tenant_id = ${tenantId}::uuid AND u.settlement = 'invoice' AND u.invoice_id IS NULL
           AND u.ended_at > ${start} AND u.ended_at <= ${end}
         FOR UPDATE OF u`;
      const total = usage.reduce((s, u) => s + Number(u.amount_cents), 0);
      if (total === 0) throw nothingToInvoice("No billable usage in this period");
      const [{ next }] = await tx.$queryRaw<[{ next: number }]>`SELECT COALESCE(max(number), 0)::int + 1 AS next FROM invoices`;
      const inv = await tx.invoice.create({
        data: { number: next, tenantId, periodStart: start, periodEnd: end, amountCents: BigInt(total), createdBy: actor.principal.label },
        select: { id: true },
      });
      const lines = new Map<
        string,
        {
          gpu_type: string;
          job_id: string | null;
          endpoint_id: string | null;
          reservation_id: string | null;
          pod_id: string | null;
          description: string;
          gpu_seconds: number;
          amount_cents: number;
          /** the reservations that covered its segments, and whether any segment was not covered */
          covered: Set<string>;
          uncovered: boolean;
        }
      >();
      for (const u of usage) {
        const key =
          u.job_id ?? (u.endpoint_id ? `endpoint:${u.endpoint_id}` : u.pod_id ? `pod:${u.pod_id}` : `reservation:${u.reservation_id}`);
        const what =
          u.job_id || u.pod_id
            ? `${u.gpu_count} × ${u.gpu_type}`
            : u.endpoint_id
              ? `replicas of ${u.gpu_count} × ${u.gpu_type}`
              : `${u.gpu_type} nodes, billed for the whole window`;
        const l = lines.get(key) ?? {
          gpu_type: u.gpu_type,
          job_id: u.job_id,
          endpoint_id: u.endpoint_id,
          reservation_id: u.reservation_id,
          pod_id: u.pod_id,
          description: `${u.subject_name} (${what})`,
          gpu_seconds: 0,
          amount_cents: 0,
          covered: new Set<string>(),
          uncovered: false,
        };
        l.gpu_seconds += Number(u.gpu_seconds);
        l.amount_cents += Number(u.amount_cents);
        if (u.covered_by_reservation_id) l.covered.add(u.covered_by_reservation_id);
        else l.uncovered = true;
        lines.set(key, l);
      }
      await tx.invoiceLine.createMany({
        // usage of a few seconds that costs nothing is settled with the rest but gets no line of its own
        data: [...lines.values()]
          .filter((l) => !isNegligibleLine(l.gpu_seconds, l.amount_cents))
          .map((l) => {
            // work inside a reservation is paid for by the reservation's own line: the line says which
            const only = !l.uncovered && l.covered.size === 1 ? [...l.covered][0]! : null;
            const coverage = only
              ? ` — covered by reservation ${only.slice(0, 8)}`
              : l.covered.size
                ? ` — partly covered by reservation ${[...l.covered].map((r) => r.slice(0, 8)).join(", ")}`
                : "";
            return {
              invoiceId: inv.id,
              gpuType: l.gpu_type,
              jobId: l.job_id,
              endpointId: l.endpoint_id,
              reservationId: l.reservation_id,
              podId: l.pod_id,
              coveredByReservationId: only,
              description: `${l.description}${coverage}`,
              gpuSeconds: BigInt(l.gpu_seconds),
              amountCents: BigInt(l.amount_cents),
            };
          }),
      });
      await tx.$executeRaw`UPDATE usage_events SET invoice_id = ${inv.id}::uuid WHERE id = ANY(${usage.map((u) => u.id)}::uuid[])`;
      await recordAudit(tx, actor, {
        action: "billing.invoice_created",
        targetType: "invoice",
        targetId: inv.id,
        tenantId,
        details: {
          number: next,
          amount_cents: total,
          period_start: start.toISOString(),
          period_end: end.toISOString(),
          usage_events: usage.length,
        },
      });
      return inv.id;
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict("This period is already invoiced", [{ path: "period_start", message: "Already invoiced" }]);
    throw e;
  }
  await attachStripeCheckout(invoiceId, opts.stripe);
  // the tenant hears of it by email when it has a billing address and an email server is set; a
  // failure to queue never undoes the invoice (the page then says it was not sent)
  await queueInvoiceEmail(invoiceId).catch((e: unknown) =>
    logger.warn("invoice email not queued", { invoice: invoiceId, error: String(e) }),
  );
  return (await findInvoice(invoiceId))!;
}
