import "server-only";
import type { SqlClient, Tx } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { stopReplicas } from "@/lib/endpoints/reconcile-endpoints";
import { stopRunningJobs } from "@/lib/jobs/stop-running-jobs";
import { INTERRUPT_TENANT_CALLS } from "@/lib/pipelines/statements";
import { stopTenantPods } from "@/lib/pods/stop-tenant-pods";
import { endTenantReservations } from "@/lib/reservations/end-tenant-reservations";
import { BLOCK_SUSPENDED_JOBS, LOCK_LIVE_REPLICAS, REQUEUE_SUSPENDED_JOBS } from "./statements";

const SUSPENDED_REASON = "Your organisation is suspended; this job runs again once it is reactivated";

/**
 * Stops a suspended tenant's work, inside the caller's transaction, which must hold the allocation
 * lock ("scheduler", lib/db/locks.ts) so no cycle places the tenant's work between these statements: running
 * jobs end through the set-based cancel (final segment billed once), every waiting job is blocked
 * with block_reason 'suspended', live endpoint replicas and pods stop (their last segment billed
 * too), its reservations end (cancelled before their start, released when running: it keeps no
 * nodes), and its tool calls in flight are taken back (fenced: nothing a worker gets back from them
 * is recorded; they run again after reactivation).
 */
export async function stopTenantWork(c: SqlClient, tenantIds: string[], actor: string) {
  if (tenantIds.length === 0)
    return {
      jobs_cancelled: 0,
      jobs_blocked: 0,
      replicas_stopped: 0,
      pods_stopped: 0,
      reservations_cancelled: 0,
      reservations_released: 0,
      tool_calls_interrupted: 0,
    };
  const cancelled = await stopRunningJobs(c, tenantIds, {
    error: "Stopped: the organisation was suspended",
    reason: "tenant suspended",
    actor,
  });
  const blocked = await run(c, BLOCK_SUSPENDED_JOBS, [tenantIds, SUSPENDED_REASON, actor]);
  const replicas = await run(c, LOCK_LIVE_REPLICAS, [tenantIds]);
  const stopped = await stopReplicas(
    c,
    replicas.map((r) => ({ id: r.id, reason: "tenant suspended" })),
  );
  const pods = await stopTenantPods(c, tenantIds, {
    reason: "Stopped: the organisation was suspended; start it again once it is reactivated",
    actor,
  });
  const reservations = await endTenantReservations(c, tenantIds, "the organisation was suspended", actor);
  const calls = await run(c, INTERRUPT_TENANT_CALLS, [tenantIds, "the organisation was suspended"]);
  return {
    jobs_cancelled: cancelled.length,
    jobs_blocked: blocked.length,
    replicas_stopped: stopped,
    pods_stopped: pods.length,
    ...reservations,
    tool_calls_interrupted: calls.length,
  };
}

/** Reactivation: the jobs suspension blocked go back to the queue (the scheduler re-applies quota, billing re-applies funds). */
export async function resumeTenantWork(tx: Tx, tenantId: string, actor: string) {
  const rows = await run(tx, REQUEUE_SUSPENDED_JOBS, [tenantId, actor]);
  return { jobs_requeued: rows.length };
}
