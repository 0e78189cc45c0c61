import "server-only";
import type { Tx } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import { validationFailed } from "@/lib/errors";
import { applyNodeTransition, type LockedNode } from "@/lib/fleet/apply-node-transition";
import { nodeState, type NodeState } from "@/lib/fleet/node-lifecycle";
import { oneOf } from "@/lib/vocabulary";
import { planForeignHolds } from "./foreign-holds";
import {
  describeSlurmState,
  desiredDrain,
  MIRRORED_STATUSES,
  parseSlurmNodeState,
  planMirror,
  readSlurmNode,
  type DrainInstruction,
} from "./node-state";
import type { SlurmNodeReport } from "./schemas";
import {
  CLUSTER_KIND,
  LOCK_NODE_GPU_HOLDS,
  LOCK_SLURM_NODE,
  SET_FOREIGN_HOLDERS,
  SET_SLURM_NODE_LOAD,
  STATUS_REASON,
  UPSERT_SLURM_NODE,
} from "./statements";

// A Slurm node's report (its bridge's registration and heartbeats): what Slurm says of it is
// recorded beside the node, its lifecycle follows Slurm's state (lib/slurm/node-state.ts), the GPUs
// jobs outside GPUForge hold are marked so the scheduler leaves them alone, and the heartbeat's
// answer says whether GPUForge wants the node drained in Slurm.

/** Only a Slurm cluster's nodes report a Slurm state, and they always do. */
export async function assertSlurmReportFits(
  tx: Pick<Tx, "$queryRawUnsafe" | "$executeRawUnsafe">,
  clusterId: string,
  report: SlurmNodeReport | undefined,
) {
  const kind = (await runOne(tx, CLUSTER_KIND, [clusterId]))?.kind;
  if (kind === "slurm" && !report)
    throw validationFailed([
      {
        path: "slurm",
        message: "Nodes of a Slurm cluster are reported by its Slurm bridge, with their Slurm state (npm run slurm-bridge)",
      },
    ]);
  if (kind !== "slurm" && report)
    throw validationFailed([{ path: "slurm", message: "Only nodes of a cluster of kind slurm report a Slurm state" }]);
}

const reportedAt = (r: SlurmNodeReport) => (r.reason_at ? new Date(r.reason_at) : null);

async function upsert(tx: Tx, nodeId: string, r: SlurmNodeReport) {
  await run(tx, UPSERT_SLURM_NODE, [
    nodeId,
    r.state,
    r.reason?.trim() || null,
    r.reason_by?.trim() || null,
    reportedAt(r),
    r.partitions ?? null,
    r.cpus ?? null,
    r.cpus_alloc ?? null,
    r.memory_mb ?? null,
    r.memory_alloc_mb ?? null,
    r.gres?.trim() || null,
  ]);
}

/** A registration's Slurm section: the node's Slurm state and inventory. */
export async function recordSlurmInventory(tx: Tx, nodeId: string, report: SlurmNodeReport) {
  await upsert(tx, nodeId, report);
}

const exhausted = (r: { cpus?: number | null; cpus_alloc?: number | null; memory_mb?: number | null; memory_alloc_mb?: number | null }) =>
  (r.cpus != null && r.cpus > 0 && r.cpus_alloc != null && r.cpus_alloc >= r.cpus) ||
  (r.memory_mb != null && r.memory_mb > 1 && r.memory_alloc_mb != null && r.memory_alloc_mb >= r.memory_mb);

const foreignLabel = (j: { slurm_job_id?: string; user?: string | null }) =>
  j.slurm_job_id ? `Slurm job ${j.slurm_job_id}${j.user ? ` (${j.user})` : ""}` : "Slurm jobs outside GPUForge";

/**
 * A Slurm node's heartbeat, inside the heartbeat's transaction (the node row locked by the caller):
 * returns the node's lifecycle state afterwards and what GPUForge wants of it in Slurm, or null for
 * a node that is not reported as a Slurm node.
 */
export async function applySlurmHeartbeat(
  tx: Tx,
  row: LockedNode & { cluster_id: string },
  report: SlurmNodeReport | undefined,
): Promise<{ state: NodeState; drain: DrainInstruction } | null> {
  await assertSlurmReportFits(tx, row.cluster_id, report);
  if (!report) return null;
  const before = await runOne(tx, LOCK_SLURM_NODE, [row.id]);
  const wasExhausted = before ? exhausted(before) : false;
  await upsert(tx, row.id, report);

  // the lifecycle, by what Slurm says (each step through the state machine, recorded in node_events)
  const reading = readSlurmNode(parseSlurmNodeState(report.state), report.reason);
  const mirrored = before?.mirrored_status ? oneOf(MIRRORED_STATUSES, before.mirrored_status, "slurm_nodes.mirrored_status") : null;
  const plan = planMirror(nodeState(row), mirrored, reading, describeSlurmState(report.state, report.reason));
  let current: LockedNode = row;
  for (const step of plan.steps) {
    const t = await applyNodeTransition(tx, current, step.event, step.reason, "slurm");
    if (t.ok) current = { id: row.id, status: t.state.status, status_before_offline: t.state.statusBeforeOffline };
  }

  // foreign load: which GPUs jobs outside GPUForge hold (and all the rest when the node has no room left)
  const foreign = report.foreign ?? [];
  const full = exhausted(report);
  let unplaced = 0;
  if (foreign.length || full || (before?.foreign_gpus ?? 0) > 0 || wasExhausted) {
    const gpus = await run(tx, LOCK_NODE_GPU_HOLDS, [row.id]);
    const holds = planForeignHolds(
      gpus.map((g) => ({ id: g.id, index: g.index, allocated: g.allocated, holder: g.foreign_holder })),
      foreign.map((j) => ({ label: foreignLabel(j), gpus: j.gpus, indices: j.indices ?? null })),
      full,
    );
    unplaced = holds.unplaced;
    if (holds.changes.length)
      await run(tx, SET_FOREIGN_HOLDERS, [row.id, holds.changes.map((c) => c.id), holds.changes.map((c) => c.holder)]);
  }
  const foreignGpus = foreign.reduce((n, j) => n + j.gpus, 0);
  await run(tx, SET_SLURM_NODE_LOAD, [
    row.id,
    plan.mirrored,
    foreignGpus,
    Math.min(unplaced, foreignGpus),
    JSON.stringify(
      foreign.map((j) => ({
        slurm_job_id: j.slurm_job_id ?? null,
        user: j.user ?? null,
        partition: j.partition ?? null,
        gpus: j.gpus,
        started_at: j.started_at ?? null,
      })),
    ),
  ]);

  const state = nodeState(current);
  const outOfService = state.status === "offline" ? state.statusBeforeOffline : state.status;
  const why =
    outOfService && outOfService !== "available" && outOfService !== "registered"
      ? ((await runOne(tx, STATUS_REASON, [row.id, outOfService]))?.reason ?? null)
      : null;
  return { state, drain: desiredDrain(state, plan.mirrored, why) };
}
