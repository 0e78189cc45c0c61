import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db, pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { notFound } from "@/lib/errors";
import { assertTenantVisible, balanceOf } from "./ledger";
import { balanceLevel, currentMonth, projectedZeroAt } from "./money";
import { monthSpendByTenant } from "./month-spend";
import { BILLING_SUMMARY, JOB_BILLED_CENTS, RUNNING_COST, TENANT_BILLING_TABLE, USAGE_BY_GPU_TYPE, USAGE_BY_MONTH } from "./statements";

/** A tenant's billed usage for a window (default: this month so far), by GPU type and event. */
export async function tenantUsage(p: Principal, tenantId: string, q: { from?: string; to?: string }, now = new Date()) {
  assertTenantVisible(p, tenantId);
  if (!(await db().tenant.findUnique({ where: { id: tenantId }, select: { id: true } }))) throw notFound("Tenant");
  const from = q.from ? new Date(q.from) : currentMonth(now).start;
  const to = q.to ? new Date(q.to) : now;
  const events = await db().usageEvent.findMany({
    where: { tenantId, endedAt: { gt: from, lte: to } },
    orderBy: { endedAt: "desc" },
    take: 1000,
  });
  const rows = await run(pool(), USAGE_BY_GPU_TYPE, [tenantId, from, to]);
  const byType = rows.map((r) => ({ gpu_type: r.gpu_type, gpu_seconds: Number(r.gpu_seconds), amount_cents: Number(r.amount_cents) }));
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    amount_cents: byType.reduce((s, r) => s + r.amount_cents, 0),
    gpu_seconds: byType.reduce((s, r) => s + r.gpu_seconds, 0),
    by_gpu_type: byType,
    events: events.map((e) => ({
      id: e.id,
      job_id: e.jobId,
      endpoint_id: e.endpointId,
      replica_id: e.replicaId,
      pod_id: e.podId,
      reservation_id: e.reservationId,
      covered_by_reservation_id: e.coveredByReservationId,
      attempt: e.attempt,
      kind: e.kind,
      gpu_type: e.gpuType,
      gpu_count: e.gpuCount,
      started_at: e.startedAt.toISOString(),
      ended_at: e.endedAt.toISOString(),
      gpu_seconds: Number(e.gpuSeconds),
      cents_per_hour: e.centsPerHour,
      amount_cents: Number(e.amountCents),
      invoice_id: e.invoiceId,
    })),
  };
}

/**
 * What runs now (a tenant's, one job's, or everything): the cost not yet billed, from where each
 * run's billing stopped, and the spend per hour at today's rates (the low-balance projection).
 * Work inside a reservation costs nothing more: the reserved nodes are billed instead.
 */
async function runningCost(filter: { tenantId?: string; jobId?: string }): Promise<{ unbilled_cents: number; cents_per_hour: number }> {
  // what runs: each job's current run and each live replica outside a reservation, each running
  // pod (never inside one), and each node a reservation holds now, from where its billing stopped
  const rows = await run(pool(), RUNNING_COST, [filter.tenantId ?? null, filter.jobId ?? null, null]);
  return {
    unbilled_cents: rows.reduce((s, r) => s + Number(r.c), 0),
    cents_per_hour: rows.reduce((s, r) => s + Number(r.per_hour), 0),
  };
}

/** A job's cost so far: every billed segment of every attempt, plus its running attempt not yet billed. */
export async function jobCostSoFar(
  jobId: string,
): Promise<{ billed_cents: number; running_cents: number; total_cents: number; cents_per_hour: number }> {
  const [billed, running] = await Promise.all([run(pool(), JOB_BILLED_CENTS, [jobId]), runningCost({ jobId })]);
  const b = Number(billed[0]!.c);
  return {
    billed_cents: b,
    running_cents: running.unbilled_cents,
    total_cents: b + running.unbilled_cents,
    cents_per_hour: running.cents_per_hour,
  };
}

/** Revenue figures for operators: paid, outstanding, counts, and this month's money (billed and accruing, month-spend.ts). */
export async function billingSummary(now = new Date()) {
  const [rows, month] = await Promise.all([run(pool(), BILLING_SUMMARY), monthSpendByTenant(now)]);
  const r = rows[0]!;
  return {
    revenue_cents: Number(r.revenue),
    outstanding_cents: Number(r.outstanding),
    invoices_paid: r.paid,
    invoices_pending: r.pending,
    revenue_month_cents: month.all.total_cents,
    revenue_month_billed_cents: month.all.billed_cents,
    revenue_month_accruing_cents: month.all.accruing_cents,
  };
}

/** Billed usage per calendar month (UTC), oldest first, for the operator's revenue chart. */
export async function usageByMonth(months = 12, tenantId?: string) {
  const rows = await run(pool(), USAGE_BY_MONTH, [months, tenantId ?? null]);
  return rows.map((r) => ({ month: r.month.toISOString().slice(0, 7), gpu_type: r.gpu_type, cents: Number(r.cents) }));
}

/** Per tenant: this month's money (billed and accruing, month-spend.ts), outstanding invoices and prepaid balance. */
export async function tenantBillingTable(now = new Date()) {
  const [rows, month] = await Promise.all([run(pool(), TENANT_BILLING_TABLE), monthSpendByTenant(now)]);
  return rows.map((r) => {
    const m = month.byTenant.get(r.id);
    return {
      id: r.id,
      name: r.name,
      billingMode: r.billing_mode,
      billedCents: m?.billed_cents ?? 0,
      accruingCents: m?.accruing_cents ?? 0,
      outstandingCents: Number(r.outstanding),
      balanceCents: Number(r.balance),
    };
  });
}

/** A prepaid tenant's outlook: balance, spend per hour of what runs now, and when the balance reaches zero at that pace. */
export async function balanceOutlook(tenantId: string, now = new Date()) {
  const [balance, running] = await Promise.all([balanceOf(tenantId), runningCost({ tenantId })]);
  // what is not billed yet comes off the balance at the next meter tick
  const effective = balance - running.unbilled_cents;
  return {
    balance_cents: balance,
    unbilled_cents: running.unbilled_cents,
    spend_cents_per_hour: running.cents_per_hour,
    level: balanceLevel(effective, running.cents_per_hour),
    zero_at: projectedZeroAt(effective, running.cents_per_hour, now)?.toISOString() ?? null,
    grace_s: env().PREPAID_GRACE_S,
  };
}
