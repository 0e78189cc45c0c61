import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db, pool } from "@/lib/db/client";
import { env } from "@/lib/env";
import { notFound } from "@/lib/errors";
import { assertTenantVisible, balanceOf } from "./ledger";
import { balanceLevel, currentMonth, projectedZeroAt } from "./money";

/** A tenant's billed usage for a window (default: this month so far), by GPU type and event. */
export async function tenantUsage(p: Principal, tenantId: string, q: { from?: string; to?: string }, now = new Date()) {
  assertTenantVisible(p, tenantId);
  if (!(await db().tenant.findUnique({ where: { id: tenantId }, select: { id: true } }))) throw notFound("Tenant");
  const from = q.from ? new Date(q.from) : currentMonth(now).start;
  const to = q.to ? new Date(q.to) : now;
  const events = await db().usageEvent.findMany({ where: { tenantId, endedAt: { gt: from, lte: to } }, orderBy: { endedAt: "desc" }, take: 1000 });
  const { rows } = await pool().query<{ gpu_type: string; gpu_seconds: string; amount_cents: string }>(
    `SELECT gpu_type, sum(gpu_seconds)::text AS gpu_seconds, sum(amount_cents)::text AS amount_cents FROM usage_events
      WHERE tenant_id = $1 AND ended_at > $2 AND ended_at <= $3 GROUP BY gpu_type ORDER BY 3 DESC`,
    [tenantId, from, to],
  );
  const byType = rows.map((r) => ({ gpu_type: r.gpu_type, gpu_seconds: Number(r.gpu_seconds), amount_cents: Number(r.amount_cents) }));
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    amount_cents: byType.reduce((s, r) => s + r.amount_cents, 0),
    gpu_seconds: byType.reduce((s, r) => s + r.gpu_seconds, 0),
    by_gpu_type: byType,
    events: events.map((e) => ({
      id: e.id, job_id: e.jobId, endpoint_id: e.endpointId, replica_id: e.replicaId, reservation_id: e.reservationId, covered_by_reservation_id: e.coveredByReservationId, attempt: e.attempt, kind: e.kind, gpu_type: e.gpuType, gpu_count: e.gpuCount,
      started_at: e.startedAt.toISOString(), ended_at: e.endedAt.toISOString(), gpu_seconds: Number(e.gpuSeconds),
      cents_per_hour: e.centsPerHour, amount_cents: Number(e.amountCents), invoice_id: e.invoiceId,
    })),
  };
}

/** What running work (jobs, endpoint replicas, reserved nodes) has cost this month but is not billed yet (from the last billed segment to now, at current rates). */
export async function unbilledRunningCents(tenantId?: string, jobId?: string): Promise<number> {
  return (await runningCost({ tenantId, jobId })).unbilled_cents;
}

/**
 * What runs now (a tenant's, one job's, or everything): the cost not yet billed, from where each
 * run's billing stopped, and the spend per hour at today's rates (the low-balance projection).
 * Work inside a reservation costs nothing more: the reserved nodes are billed instead.
 */
export async function runningCost(filter: { tenantId?: string; jobId?: string }): Promise<{ unbilled_cents: number; cents_per_hour: number }> {
  // what runs: each job's current run and each live replica outside a reservation, and each node a
  // reservation holds now, from where its billing stopped
  const { rows } = await pool().query<{ c: string; per_hour: string }>(
    `WITH running AS (
       SELECT j.gpu_type, j.gpu_count, GREATEST(j.started_at, COALESCE(u.last_end, j.started_at)) AS billed_to, now() AS until
         FROM jobs j LEFT JOIN LATERAL (SELECT max(ended_at) AS last_end FROM usage_events WHERE job_id = j.id AND attempt = j.attempts) u ON true
        WHERE j.status = 'running' AND ($1::uuid IS NULL OR j.tenant_id = $1::uuid) AND ($2::uuid IS NULL OR j.id = $2::uuid)
          AND NOT EXISTS (SELECT 1 FROM job_placements p WHERE p.job_id = j.id AND p.attempt = j.attempts AND p.reservation_id IS NOT NULL)
       UNION ALL
       SELECT x.gpu_type, x.gpu_count, GREATEST(x.started_at, COALESCE(u.last_end, x.started_at)), now()
         FROM endpoint_replicas x LEFT JOIN LATERAL (SELECT max(ended_at) AS last_end FROM usage_events WHERE replica_id = x.id) u ON true
        WHERE x.status <> 'stopped' AND x.reservation_id IS NULL AND ($1::uuid IS NULL OR x.tenant_id = $1::uuid) AND $2::uuid IS NULL
       UNION ALL
       SELECT rv.gpu_type, h.gpu_count, GREATEST(h.starts_at, COALESCE(u.last_end, h.starts_at)), LEAST(now(), h.ends_at)
         FROM reservation_nodes h JOIN reservations rv ON rv.id = h.reservation_id
         LEFT JOIN LATERAL (SELECT max(ended_at) AS last_end FROM usage_events WHERE reservation_node_id = h.id) u ON true
        WHERE h.live AND h.closed_at IS NULL AND h.starts_at < now() AND ($1::uuid IS NULL OR h.tenant_id = $1::uuid) AND $2::uuid IS NULL
     )
     SELECT COALESCE(sum(round(GREATEST(extract(epoch FROM w.until - w.billed_to), 0) * w.gpu_count * COALESCE(r.cents_per_hour, 0) / 3600.0)), 0)::text AS c,
            COALESCE(sum(w.gpu_count * COALESCE(r.cents_per_hour, 0)) FILTER (WHERE w.until >= now()), 0)::text AS per_hour
       FROM running w
       LEFT JOIN LATERAL (SELECT cents_per_hour FROM gpu_rates WHERE gpu_type IN (w.gpu_type, '*') AND effective_from <= now()
                          ORDER BY (gpu_type = '*'), effective_from DESC LIMIT 1) r ON true`,
    [filter.tenantId ?? null, filter.jobId ?? null],
  );
  return { unbilled_cents: Number(rows[0]!.c), cents_per_hour: Number(rows[0]!.per_hour) };
}

/** A job's cost so far: every billed segment of every attempt, plus its running attempt not yet billed. */
export async function jobCostSoFar(jobId: string): Promise<{ billed_cents: number; running_cents: number; total_cents: number; cents_per_hour: number }> {
  const [billed, running] = await Promise.all([
    pool().query<{ c: string }>(`SELECT COALESCE(sum(amount_cents), 0)::text AS c FROM usage_events WHERE job_id = $1`, [jobId]),
    runningCost({ jobId }),
  ]);
  const b = Number(billed.rows[0]!.c);
  return { billed_cents: b, running_cents: running.unbilled_cents, total_cents: b + running.unbilled_cents, cents_per_hour: running.cents_per_hour };
}

/** Revenue figures for operators: paid, outstanding, counts, and what this month has billed so far. */
export async function billingSummary(now = new Date()) {
  const month = currentMonth(now);
  const { rows } = await pool().query<{ revenue: string; outstanding: string; paid: number; pending: number; month_usage: string }>(
    `SELECT (SELECT COALESCE(sum(amount_cents), 0) FROM invoices WHERE status = 'paid')::text AS revenue,
            (SELECT COALESCE(sum(amount_cents), 0) FROM invoices WHERE status = 'pending')::text AS outstanding,
            (SELECT count(*) FROM invoices WHERE status = 'paid')::int AS paid,
            (SELECT count(*) FROM invoices WHERE status = 'pending')::int AS pending,
            (SELECT COALESCE(sum(amount_cents), 0) FROM usage_events WHERE ended_at > $1 AND ended_at <= $2)::text AS month_usage`,
    [month.start, month.end],
  );
  const r = rows[0]!;
  return {
    revenue_cents: Number(r.revenue),
    outstanding_cents: Number(r.outstanding),
    invoices_paid: r.paid,
    invoices_pending: r.pending,
    // billed usage this month plus running work not billed yet
    revenue_month_cents: Number(r.month_usage) + (await unbilledRunningCents()),
  };
}

/** Billed usage per calendar month (UTC), oldest first, for the operator's revenue chart. */
export async function usageByMonth(months = 12, tenantId?: string) {
  const { rows } = await pool().query<{ month: Date; gpu_type: string; cents: string }>(
    `SELECT date_trunc('month', ended_at) AS month, gpu_type, sum(amount_cents)::text AS cents FROM usage_events
      WHERE ended_at >= date_trunc('month', now()) - make_interval(months => $1::int - 1) AND ($2::uuid IS NULL OR tenant_id = $2::uuid)
      GROUP BY 1, 2 ORDER BY 1`,
    [months, tenantId ?? null],
  );
  return rows.map((r) => ({ month: r.month.toISOString().slice(0, 7), gpu_type: r.gpu_type, cents: Number(r.cents) }));
}

/** Per tenant: this month's usage, outstanding invoices and prepaid balance. */
export async function tenantBillingTable(now = new Date()) {
  const month = currentMonth(now);
  const { rows } = await pool().query<{ id: string; name: string; billing_mode: string; month_cents: string; outstanding: string; balance: string }>(
    `SELECT t.id, t.name, t.billing_mode,
            COALESCE((SELECT sum(amount_cents) FROM usage_events u WHERE u.tenant_id = t.id AND u.ended_at > $1 AND u.ended_at <= $2), 0)::text AS month_cents,
            COALESCE((SELECT sum(amount_cents) FROM invoices i WHERE i.tenant_id = t.id AND i.status = 'pending'), 0)::text AS outstanding,
            COALESCE((SELECT sum(amount_cents) FROM ledger_entries l WHERE l.tenant_id = t.id), 0)::text AS balance
       FROM tenants t ORDER BY t.name`,
    [month.start, month.end],
  );
  return rows.map((r) => ({ id: r.id, name: r.name, billingMode: r.billing_mode, monthCents: Number(r.month_cents), outstandingCents: Number(r.outstanding), balanceCents: Number(r.balance) }));
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
