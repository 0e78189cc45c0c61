import "server-only";
import type pg from "pg";
import type { Decision, QueuedJob } from "@/lib/scheduler/placement";

// Pods in the scheduler's cycle (lib/scheduler/run-cycle.ts): waiting pods join its queue as work
// of one node that runs containers, ordered, fair-shared and quota-checked with jobs by the same
// placement function, and the cycle writes their placements here, in its transaction.

/** A pod's place in the queue (interactive work asks for no special treatment; its tenant's cap applies). */
export const POD_PRIORITY = 5;
const MAX_WAITING_PODS = 5_000;

/**
 * Pending pods of active tenants, oldest first. A prepaid tenant whose balance ran out gets none
 * placed (funds arriving lets them go again; billing's sweep stops its running ones after grace).
 */
export async function waitingPods(c: pg.PoolClient): Promise<QueuedJob[]> {
  const { rows } = await c.query<{ id: string; tenant_id: string; gpu_count: number; gpu_type: string; cluster_id: string | null; priority: number; created_ms: string }>(
    `SELECT p.id, p.tenant_id, p.gpu_count, p.gpu_type, p.cluster_id, GREATEST($2::int, t.max_priority) AS priority, (extract(epoch FROM p.created_at) * 1000)::bigint AS created_ms
       FROM pods p JOIN tenants t ON t.id = p.tenant_id
      WHERE p.status = 'pending' AND t.status = 'active' AND NOT (t.billing_mode = 'prepaid' AND t.balance_exhausted_at IS NOT NULL)
      ORDER BY p.created_at LIMIT $1`,
    [MAX_WAITING_PODS, POD_PRIORITY],
  );
  return rows.map((p) => ({
    id: p.id,
    kind: "pod" as const,
    tenantId: p.tenant_id,
    gpuCount: p.gpu_count,
    gpuType: p.gpu_type,
    clusterId: p.cluster_id,
    needsContainers: true,
    singleNode: true,
    priority: p.priority,
    submittedAt: Number(p.created_ms),
    durationS: null,
    status: "queued" as const,
  }));
}

/** A waiting pod's placement was taken meanwhile (stopped, terminated): the cycle rolls back and runs again. */
export class PodConflict extends Error {}

/**
 * Writes the cycle's decisions about pods: placed ones start (a new placement with its own fence,
 * their GPUs taken, the transition recorded), the others keep waiting with the reason a tenant reads.
 * Pods first, then their GPUs: the statement-level checks on gpus see each pod starting with its GPUs.
 */
export async function writePodDecisions(c: pg.PoolClient, decisions: Decision[]): Promise<void> {
  const placed = decisions.filter((d): d is Extract<Decision, { outcome: "placed" }> => d.outcome === "placed");
  if (placed.length) {
    const started = await c.query(
      `UPDATE pods p SET status = 'starting', attempts = attempts + 1, fence = gen_random_uuid(), node_id = x.node_id, pending_reason = NULL,
              status_reason = 'placed; its node is starting the container', updated_at = now()
         FROM unnest($1::uuid[], $2::uuid[]) AS x(id, node_id)
        WHERE p.id = x.id AND p.status = 'pending'`,
      [placed.map((d) => d.jobId), placed.map((d) => d.nodeIds[0]!)],
    );
    if (started.rowCount !== placed.length) throw new PodConflict("a waiting pod changed during the cycle");
    await c.query(
      `UPDATE gpus g SET allocated_pod_id = x.pod_id, updated_at = now() FROM unnest($1::uuid[], $2::uuid[]) AS x(gpu_id, pod_id) WHERE g.id = x.gpu_id`,
      [placed.flatMap((d) => d.gpuIds), placed.flatMap((d) => d.gpuIds.map(() => d.jobId))],
    );
    await c.query(
      `INSERT INTO pod_placements (pod_id, attempt, fence, node_id, gpu_type, gpu_ids, started_at)
       SELECT p.id, p.attempts, p.fence, p.node_id, p.gpu_type, array_agg(g.id ORDER BY g.index), clock_timestamp()
         FROM pods p JOIN gpus g ON g.allocated_pod_id = p.id WHERE p.id = ANY($1::uuid[]) GROUP BY p.id`,
      [placed.map((d) => d.jobId)],
    );
    await c.query(
      `INSERT INTO pod_events (pod_id, from_status, to_status, reason, actor)
       SELECT p.id, 'pending', 'starting', 'placed on ' || n.hostname, 'scheduler' FROM pods p JOIN nodes n ON n.id = p.node_id WHERE p.id = ANY($1::uuid[])`,
      [placed.map((d) => d.jobId)],
    );
  }
  const waiting = decisions.filter((d): d is Exclude<Decision, { outcome: "placed" }> => d.outcome !== "placed");
  if (waiting.length) {
    await c.query(
      `UPDATE pods p SET pending_reason = x.reason, updated_at = now() FROM unnest($1::uuid[], $2::text[]) AS x(id, reason)
        WHERE p.id = x.id AND p.status = 'pending' AND p.pending_reason IS DISTINCT FROM x.reason`,
      [waiting.map((d) => d.jobId), waiting.map((d) => d.reason)],
    );
  }
}
