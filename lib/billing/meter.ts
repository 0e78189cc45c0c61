import "server-only";
import { emitEvent } from "@/lib/background/emit";
import { pool } from "@/lib/db/client";
import { inTransaction } from "@/lib/db/transaction";
import { env } from "@/lib/env";
import { stopRunningJobs } from "@/lib/jobs/stop-running-jobs";
import { stopTenantPods } from "@/lib/pods/stop-tenant-pods";

/**
 * Bills the elapsed part of running jobs, live endpoint replicas, running pods and reserved nodes: prepaid tenants' every `prepaidEveryS` (their balance
 * is charged in the same statement), invoiced tenants' every `invoiceEveryS`, so a month-end
 * invoice holds work that is still running. Each segment starts where the run's last one ended
 * (the database refuses overlaps); jobs another transaction holds are skipped until the next run.
 */
export async function accrueRunningUsage(opts: { prepaidEveryS?: number; invoiceEveryS?: number; tenantId?: string; until?: Date } = {}) {
  const { rows } = await pool().query<{ billed: number }>(
    `WITH due AS (
       SELECT j.id, j.tenant_id, j.attempts, j.gpu_type, j.gpu_count, j.started_at
         FROM jobs j JOIN tenants t ON t.id = j.tenant_id
        WHERE j.status = 'running' AND j.started_at IS NOT NULL
          AND ($3::uuid IS NULL OR j.tenant_id = $3::uuid)
          AND COALESCE((SELECT max(u.ended_at) FROM usage_events u WHERE u.job_id = j.id AND u.attempt = j.attempts), j.started_at)
              <= COALESCE($4::timestamptz, now()) - make_interval(secs => CASE WHEN t.billing_mode = 'prepaid' THEN $1::int ELSE $2::int END)
        FOR UPDATE OF j SKIP LOCKED
     )
     SELECT count(bill_usage_segment(id, tenant_id, attempts, gpu_type, gpu_count, started_at, 'accrual', LEAST(COALESCE($4::timestamptz, now()), now())))::int AS billed
       FROM due`,
    [opts.prepaidEveryS ?? 45, opts.invoiceEveryS ?? 3600, opts.tenantId ?? null, opts.until?.toISOString() ?? null],
  );
  const replicas = await pool().query<{ billed: number }>(
    `WITH due AS (
       SELECT r.id FROM endpoint_replicas r JOIN tenants t ON t.id = r.tenant_id
        WHERE r.status <> 'stopped' AND ($3::uuid IS NULL OR r.tenant_id = $3::uuid)
          AND COALESCE((SELECT max(u.ended_at) FROM usage_events u WHERE u.replica_id = r.id), r.started_at)
              <= COALESCE($4::timestamptz, now()) - make_interval(secs => CASE WHEN t.billing_mode = 'prepaid' THEN $1::int ELSE $2::int END)
        FOR UPDATE OF r SKIP LOCKED
     )
     SELECT count(bill_replica_segment(id, 'accrual', LEAST(COALESCE($4::timestamptz, now()), now())))::int AS billed FROM due`,
    [opts.prepaidEveryS ?? 45, opts.invoiceEveryS ?? 3600, opts.tenantId ?? null, opts.until?.toISOString() ?? null],
  );
  const pods = await pool().query<{ billed: number }>(
    `WITH due AS (
       SELECT pl.pod_id, pl.attempt FROM pod_placements pl JOIN pods p ON p.id = pl.pod_id JOIN tenants t ON t.id = p.tenant_id
        WHERE pl.ended_at IS NULL AND pl.running_at IS NOT NULL AND ($3::uuid IS NULL OR p.tenant_id = $3::uuid)
          AND COALESCE((SELECT max(u.ended_at) FROM usage_events u WHERE u.pod_id = pl.pod_id AND u.attempt = pl.attempt), pl.running_at)
              <= COALESCE($4::timestamptz, now()) - make_interval(secs => CASE WHEN t.billing_mode = 'prepaid' THEN $1::int ELSE $2::int END)
        FOR UPDATE OF pl SKIP LOCKED
     )
     SELECT count(bill_pod_segment(pod_id, attempt, 'accrual', LEAST(COALESCE($4::timestamptz, now()), now())))::int AS billed FROM due`,
    [opts.prepaidEveryS ?? 45, opts.invoiceEveryS ?? 3600, opts.tenantId ?? null, opts.until?.toISOString() ?? null],
  );
  // nodes reservations hold: their whole window, used or not, never past its end
  const held = await pool().query<{ billed: number }>(
    `WITH due AS (
       SELECT h.id FROM reservation_nodes h JOIN tenants t ON t.id = h.tenant_id
        WHERE h.live AND h.closed_at IS NULL AND h.starts_at < LEAST(COALESCE($4::timestamptz, now()), now()) AND ($3::uuid IS NULL OR h.tenant_id = $3::uuid)
          AND COALESCE((SELECT max(u.ended_at) FROM usage_events u WHERE u.reservation_node_id = h.id), h.starts_at)
              <= COALESCE($4::timestamptz, now()) - make_interval(secs => CASE WHEN t.billing_mode = 'prepaid' THEN $1::int ELSE $2::int END)
        FOR UPDATE OF h SKIP LOCKED
     )
     SELECT count(bill_reservation_segment(id, 'accrual', LEAST(COALESCE($4::timestamptz, now()), now())))::int AS billed FROM due`,
    [opts.prepaidEveryS ?? 45, opts.invoiceEveryS ?? 3600, opts.tenantId ?? null, opts.until?.toISOString() ?? null],
  );
  return { segments: rows[0]!.billed + replicas.rows[0]!.billed + held.rows[0]!.billed + pods.rows[0]!.billed };
}

/**
 * Prepaid tenants at or below zero: their waiting jobs are blocked for billing at once (and their
 * pending pods are not placed), and their running jobs and pods stop once the grace period the operator configured (PREPAID_GRACE_S) has passed.
 * Jobs blocked for billing of any tenant that is not at zero (funds arrived, or it left prepaid)
 * are queued again.
 */
export async function enforcePrepaidBalances(graceS = env().PREPAID_GRACE_S) {
  const out = await inTransaction(async (c) => {
    const { rows: tenants } = await c.query<{ id: string; exhausted: boolean; over_grace: boolean }>(
      `WITH b AS (
         SELECT t.id, t.balance_exhausted_at, COALESCE((SELECT sum(amount_cents) FROM ledger_entries l WHERE l.tenant_id = t.id), 0) AS balance
           FROM tenants t WHERE t.billing_mode = 'prepaid' FOR UPDATE OF t
       )
       UPDATE tenants t SET balance_exhausted_at = CASE WHEN b.balance <= 0 THEN COALESCE(b.balance_exhausted_at, now()) END
         FROM b WHERE t.id = b.id
       RETURNING t.id, b.balance <= 0 AS exhausted,
                 (b.balance <= 0 AND b.balance_exhausted_at < now() - make_interval(secs => $1::int)) AS over_grace`,
      [graceS],
    );
    const exhausted = tenants.filter((t) => t.exhausted).map((t) => t.id);
    const overGrace = tenants.filter((t) => t.over_grace).map((t) => t.id);

    const blocked = await c.query(
      `WITH old AS (
         SELECT id, status FROM jobs WHERE tenant_id = ANY($1::uuid[]) AND (status = 'queued' OR (status = 'blocked' AND block_reason = 'quota')) FOR UPDATE
       ), b AS (
         UPDATE jobs j SET status = 'blocked', block_reason = 'billing', updated_at = now(),
                pending_reason = 'Billing: your prepaid balance is used up; add funds and it runs'
           FROM old WHERE j.id = old.id
          RETURNING j.id, old.status AS from_status
       ) INSERT INTO job_events (job_id, from_status, to_status, reason, actor)
         SELECT id, from_status, 'blocked', 'prepaid balance used up', 'billing' FROM b WHERE from_status <> 'blocked'`,
      [exhausted],
    );
    const stopped = await stopRunningJobs(c, overGrace, { error: "Stopped: the prepaid balance stayed at zero past the grace period", reason: "prepaid balance at zero past the grace period", actor: "billing" });
    const podsStopped = await stopTenantPods(c, overGrace, { reason: "Stopped: the prepaid balance stayed at zero past the grace period; add funds and start it again", actor: "billing" });
    const unblocked = await c.query(
      `WITH u AS (
         UPDATE jobs SET status = 'queued', block_reason = NULL, pending_reason = 'Funds added; waiting for the next scheduling cycle', updated_at = now()
          WHERE NOT (tenant_id = ANY($1::uuid[])) AND status = 'blocked' AND block_reason = 'billing' RETURNING id
       ) INSERT INTO job_events (job_id, from_status, to_status, reason, actor) SELECT id, 'blocked', 'queued', 'funds added', 'billing' FROM u`,
      [exhausted],
    );
    return { exhausted: exhausted.length, jobs_blocked: blocked.rowCount ?? 0, jobs_stopped: stopped.length, jobs_unblocked: unblocked.rowCount ?? 0, pods_stopped: podsStopped.length };
  });
  if (out.jobs_unblocked > 0 || out.jobs_stopped || out.pods_stopped) await emitEvent("scheduler/run.requested", { reason: "billing state changed" });
  return out;
}
