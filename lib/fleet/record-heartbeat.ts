import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { emitEvent } from "@/lib/background/emit";
import { db, pool } from "@/lib/db/client";
import { handoverInstruction } from "@/lib/handover/instruction";
import { run } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { replicaAssignmentsForNode } from "@/lib/endpoints/node-assignments";
import { assignmentsForNode } from "@/lib/jobs/queries";
import { podAssignmentsForNode } from "@/lib/pods/node-assignments";
import { applySlurmHeartbeat } from "@/lib/slurm/apply-node-report";
import { AGENT_REPORTED, ECC_UNCORRECTED, fatalXidReason, REMAP_FAILURE } from "./gpu-health-reasons";
import { lockNodeOrThrow } from "./node-access";
import { nodeState, transition } from "./node-lifecycle";
import { nodeSelect, type HeartbeatInput } from "./node-schemas";
import { APPLY_GPU_REPORTS } from "./statements";
import { firstFatalXid } from "./xid-policy";

/**
 * A node's heartbeat: marks it alive, applies what the agent says of its GPUs, and answers with
 * what the node should be running (jobs, endpoint replicas and pods). It can make a registered node available and bring an offline
 * node back to its previous state, never more (lib/fleet/node-lifecycle.ts).
 */
export async function recordHeartbeat(actor: Actor, nodeId: string, input: HeartbeatInput) {
  const result = await db().$transaction(async (tx) => {
    const row = await lockNodeOrThrow(tx, actor.principal, nodeId);
    // a Slurm node's lifecycle follows what Slurm says of it, through the same state machine
    const slurm = await applySlurmHeartbeat(tx, row, input.slurm);
    const state = slurm ? slurm.state : nodeState(row);
    const t = slurm ? ({ ok: true, changed: false, state } as const) : transition(state, { kind: "heartbeat" });
    const next = t.ok ? t.state : state;
    await tx.node.update({
      where: { id: nodeId },
      data: { lastHeartbeatAt: new Date(), status: next.status, statusBeforeOffline: next.statusBeforeOffline },
    });
    if (t.ok && t.changed) {
      await tx.nodeEvent.create({
        data: {
          nodeId,
          fromStatus: t.from,
          toStatus: t.to,
          reason: row.status === "offline" ? "heartbeat resumed" : "first heartbeat",
          actor: actor.principal.label,
        },
      });
    }

    // What the agent says of each GPU, applied in one statement. Only rows that change are written:
    // a healthy report of a healthy GPU costs nothing.
    const reports = (input.gpus ?? []).map((g) => {
      const fatal = firstFatalXid(g.xid_errors);
      const hardware =
        fatal !== undefined
          ? fatalXidReason(fatal)
          : (g.ecc_uncorrected ?? 0) > 0
            ? ECC_UNCORRECTED
            : g.remap_failure
              ? REMAP_FAILURE
              : null;
      return {
        uuid: g.uuid,
        kind: hardware ? "hardware" : g.healthy ? "healthy" : "agent",
        reason: hardware,
        ecc: g.ecc_uncorrected ?? null,
        remap: g.remap_failure ?? false,
        lastXid: g.xid_errors?.length ? g.xid_errors[g.xid_errors.length - 1]! : null,
      };
    });
    if (reports.length) {
      await run(tx, APPLY_GPU_REPORTS, [
        AGENT_REPORTED,
        reports.map((r) => r.uuid),
        reports.map((r) => r.kind),
        reports.map((r) => r.reason),
        reports.map((r) => r.ecc),
        reports.map((r) => r.remap),
        reports.map((r) => r.lastXid),
        nodeId,
      ]);
    }

    return {
      node: await tx.node.findUniqueOrThrow({ where: { id: nodeId }, select: nodeSelect }),
      hardwareFault: reports.some((r) => r.kind === "hardware"),
      slurm: slurm?.drain,
    };
  });
  // a hardware fault must reach the evaluator (and the remediator) now, not at the next sweep
  if (result.hardwareFault) await emitEvent("alerts/evaluate.requested", { reason: "hardware fault reported by heartbeat" });
  const [jobs, replicas, pods, handover] = await Promise.all([
    assignmentsForNode(nodeId),
    replicaAssignmentsForNode(nodeId),
    podAssignmentsForNode(nodeId),
    handoverInstruction(pool(), nodeId),
  ]);
  // the lease: an agent that cannot renew it for this long stops its work (the control plane has moved it by then)
  return {
    node: result.node,
    assignments: [...jobs, ...replicas, ...pods],
    leaseS: env().NODE_OFFLINE_AFTER_S,
    slurm: result.slurm,
    handover,
  };
}
