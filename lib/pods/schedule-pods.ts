import "server-only";
import type pg from "pg";
import { run, runCount } from "@/lib/db/statement";
import type { Decision, QueuedJob } from "@/lib/scheduler/placement";
import {
  ALLOCATE_POD_GPUS,
  RECORD_POD_PLACEMENTS,
  RECORD_PODS_PLACED,
  SET_POD_PENDING_REASONS,
  START_PLACED_PODS,
  WAITING_PODS,
} from "./statements";

// Pods in the scheduler's cycle (lib/scheduler/run-cycle.ts): waiting pods join its queue as work
// of one node that runs containers, ordered, fair-shared and quota-checked with jobs by the same
// placement function, and the cycle writes their placements here, in its transaction.

/** A pod's place in the queue (interactive work asks for no special treatment; its tenant's cap applies). */
const POD_PRIORITY = 5;
const MAX_WAITING_PODS = 5_000;

/**
 * Pending pods of active tenants, oldest first. A prepaid tenant whose balance ran out gets none
 * placed (funds arriving lets them go again; billing's sweep stops its running ones after grace).
 */
export async function waitingPods(c: pg.PoolClient): Promise<QueuedJob[]> {
  const rows = await run(c, WAITING_PODS, [MAX_WAITING_PODS, POD_PRIORITY]);
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
    const started = await runCount(c, START_PLACED_PODS, [placed.map((d) => d.jobId), placed.map((d) => d.nodeIds[0]!)]);
    if (started !== placed.length) throw new PodConflict("a waiting pod changed during the cycle");
    await run(c, ALLOCATE_POD_GPUS, [placed.flatMap((d) => d.gpuIds), placed.flatMap((d) => d.gpuIds.map(() => d.jobId))]);
    await run(c, RECORD_POD_PLACEMENTS, [placed.map((d) => d.jobId)]);
    await run(c, RECORD_PODS_PLACED, [placed.map((d) => d.jobId)]);
  }
  const waiting = decisions.filter((d): d is Exclude<Decision, { outcome: "placed" }> => d.outcome !== "placed");
  if (waiting.length) {
    await run(c, SET_POD_PENDING_REASONS, [waiting.map((d) => d.jobId), waiting.map((d) => d.reason)]);
  }
}
