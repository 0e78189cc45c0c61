import "server-only";
import { txClient, type SqlClient, type Tx } from "@/lib/db/client";
import { stopReplicas } from "@/lib/endpoints/reconcile-endpoints";
import { stopRunningJobs } from "@/lib/jobs/stop-running-jobs";
import { stopTenantPods } from "@/lib/pods/stop-tenant-pods";

export const SUSPENDED_REASON = "Your organisation is suspended; this job runs again once it is reactivated";

/**
 * Stops a suspended tenant's work, inside the caller's transaction, which must hold the allocation
 * lock ("scheduler", lib/db/locks.ts) so no cycle places the tenant's work between these statements: running
 * jobs end through the set-based cancel (final segment billed once), every waiting job is blocked
 * with block_reason 'suspended', and live endpoint replicas stop (their last segment billed too).
 */
export async function stopTenantWork(c: SqlClient, tenantIds: string[], actor: string) {
  if (tenantIds.length === 0) return { jobs_cancelled: 0, jobs_blocked: 0, replicas_stopped: 0, pods_stopped: 0 };
  const cancelled = await stopRunningJobs(c, tenantIds, { error: "Stopped: the organisation was suspended", reason: "tenant suspended", actor });
  const { rows: blocked } = await c.query<{ id: string; from_status: string }>(
    `WITH old AS (
       SELECT id, status FROM jobs WHERE tenant_id = ANY($1::uuid[]) AND status IN ('queued', 'blocked') AND block_reason IS DISTINCT FROM 'suspended' FOR UPDATE
     ), b AS (
       UPDATE jobs j SET status = 'blocked', block_reason = 'suspended', pending_reason = $2, updated_at = now() FROM old WHERE j.id = old.id
       RETURNING j.id, old.status AS from_status
     ), e AS (
       INSERT INTO job_events (job_id, from_status, to_status, reason, actor) SELECT id, from_status, 'blocked', 'tenant suspended', $3 FROM b
     ) SELECT id::text, from_status FROM b`,
    [tenantIds, SUSPENDED_REASON, actor],
  );
  const { rows: replicas } = await c.query<{ id: string }>(
    `SELECT id::text FROM endpoint_replicas WHERE tenant_id = ANY($1::uuid[]) AND status <> 'stopped' FOR UPDATE`,
    [tenantIds],
  );
  const stopped = await stopReplicas(c, replicas.map((r) => ({ id: r.id, reason: "tenant suspended" })));
  const pods = await stopTenantPods(c, tenantIds, { reason: "Stopped: the organisation was suspended; start it again once it is reactivated", actor });
  return { jobs_cancelled: cancelled.length, jobs_blocked: blocked.length, replicas_stopped: stopped, pods_stopped: pods.length };
}

/** Reactivation: the jobs suspension blocked go back to the queue (the scheduler re-applies quota, billing re-applies funds). */
export async function resumeTenantWork(tx: Tx, tenantId: string, actor: string) {
  const { rows } = await txClient(tx).query<{ id: string }>(
    `WITH u AS (
       UPDATE jobs SET status = 'queued', block_reason = NULL, pending_reason = 'Reactivated; waiting for the next scheduling cycle', updated_at = now()
        WHERE tenant_id = $1::uuid AND status = 'blocked' AND block_reason = 'suspended' RETURNING id
     ), e AS (
       INSERT INTO job_events (job_id, from_status, to_status, reason, actor) SELECT id, 'blocked', 'queued', 'tenant reactivated', $2 FROM u
     ) SELECT id::text FROM u`,
    [tenantId, actor],
  );
  return { jobs_requeued: rows.length };
}
