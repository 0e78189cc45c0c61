import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { emitEvent } from "@/lib/background/emit";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { replicaAssignmentsForNode } from "@/lib/endpoints/node-assignments";
import { assignmentsForNode } from "@/lib/jobs/queries";
import { podAssignmentsForNode } from "@/lib/pods/node-assignments";
import { AGENT_REPORTED, ECC_UNCORRECTED, fatalXidReason, REMAP_FAILURE } from "./gpu-health-reasons";
import { lockNodeOrThrow } from "./node-access";
import { transition, type NodeState } from "./node-lifecycle";
import { nodeSelect, type HeartbeatInput } from "./node-schemas";
import { firstFatalXid } from "./xid-policy";

/**
 * A node's heartbeat: marks it alive, applies what the agent says of its GPUs, and answers with
 * what the node should be running (jobs, endpoint replicas and pods). It can make a registered node available and bring an offline
 * node back to its previous state, never more (lib/fleet/node-lifecycle.ts).
 */
export async function recordHeartbeat(actor: Actor, nodeId: string, input: HeartbeatInput) {
  const result = await db().$transaction(async (tx) => {
    const row = await lockNodeOrThrow(tx, actor.principal, nodeId);
    const state = { status: row.status, statusBeforeOffline: row.status_before_offline } as NodeState;
    const t = transition(state, { kind: "heartbeat" });
    const next = t.ok ? t.state : state;
    await tx.node.update({
      where: { id: nodeId },
      data: { lastHeartbeatAt: new Date(), status: next.status, statusBeforeOffline: next.statusBeforeOffline },
    });
    if (t.ok && t.changed) {
      await tx.nodeEvent.create({
        data: { nodeId, fromStatus: t.from, toStatus: t.to, reason: row.status === "offline" ? "heartbeat resumed" : "first heartbeat", actor: actor.principal.label },
      });
    }

    // What the agent says of each GPU, applied in one statement. Only rows that change are written:
    // a healthy report of a healthy GPU costs nothing.
    const reports = (input.gpus ?? []).map((g) => {
      const fatal = firstFatalXid(g.xid_errors);
      const hardware = fatal !== undefined ? fatalXidReason(fatal) : (g.ecc_uncorrected ?? 0) > 0 ? ECC_UNCORRECTED : g.remap_failure ? REMAP_FAILURE : null;
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
      await tx.$executeRaw`
        UPDATE gpus g SET
          status = CASE WHEN x.kind <> 'healthy' THEN 'unhealthy'
                        WHEN g.unhealthy_reason = ${AGENT_REPORTED} THEN 'available' ELSE g.status END,
          unhealthy_reason = CASE WHEN x.kind = 'hardware' THEN x.reason
                                  WHEN x.kind = 'agent' THEN COALESCE(g.unhealthy_reason, ${AGENT_REPORTED})
                                  WHEN g.unhealthy_reason = ${AGENT_REPORTED} THEN NULL ELSE g.unhealthy_reason END,
          ecc_uncorrected = CASE WHEN x.kind = 'hardware' THEN x.ecc ELSE g.ecc_uncorrected END,
          remap_failure = CASE WHEN x.kind = 'hardware' THEN x.remap ELSE g.remap_failure END,
          last_xid = COALESCE(x.last_xid, g.last_xid),
          last_xid_at = CASE WHEN x.last_xid IS NULL THEN g.last_xid_at ELSE now() END,
          updated_at = now()
          FROM unnest(${reports.map((r) => r.uuid)}::text[], ${reports.map((r) => r.kind)}::text[], ${reports.map((r) => r.reason)}::text[],
                      ${reports.map((r) => r.ecc)}::int[], ${reports.map((r) => r.remap)}::boolean[], ${reports.map((r) => r.lastXid)}::int[])
               AS x(uuid, kind, reason, ecc, remap, last_xid)
         WHERE g.node_id = ${nodeId}::uuid AND g.uuid = x.uuid AND g.status <> 'missing'
           AND (x.kind <> 'healthy' OR g.unhealthy_reason = ${AGENT_REPORTED} OR x.last_xid IS NOT NULL)`;
    }

    return { node: await tx.node.findUniqueOrThrow({ where: { id: nodeId }, select: nodeSelect }), hardwareFault: reports.some((r) => r.kind === "hardware") };
  });
  // a hardware fault must reach the evaluator (and the remediator) now, not at the next sweep
  if (result.hardwareFault) await emitEvent("alerts/evaluate.requested", { reason: "hardware fault reported by heartbeat" });
  const [jobs, replicas, pods] = await Promise.all([assignmentsForNode(nodeId), replicaAssignmentsForNode(nodeId), podAssignmentsForNode(nodeId)]);
  // the lease: an agent that cannot renew it for this long stops its work (the control plane has moved it by then)
  return { node: result.node, assignments: [...jobs, ...replicas, ...pods], leaseS: env().NODE_OFFLINE_AFTER_S };
}
