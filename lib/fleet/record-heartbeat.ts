import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { assignmentsForNode } from "@/lib/jobs/queries";
import { AGENT_REPORTED, ECC_UNCORRECTED, fatalXidReason, REMAP_FAILURE } from "./gpu-health-reasons";
import { lockNodeOrThrow } from "./node-access";
import { transition, type NodeState } from "./node-lifecycle";
import { nodeSelect, type HeartbeatInput } from "./node-schemas";
import { firstFatalXid } from "./xid-policy";

/**
 * A node's heartbeat: marks it alive, applies what the agent says of its GPUs, and answers with
 * what the node should be running. It can make a registered node available and bring an offline
 * node back to its previous state, never more (lib/fleet/node-lifecycle.ts).
 */
export async function recordHeartbeat(actor: Actor, nodeId: string, input: HeartbeatInput) {
  return db().$transaction(async (tx) => {
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

    for (const g of input.gpus ?? []) {
      const fatal = firstFatalXid(g.xid_errors);
      const hardware = fatal !== undefined ? fatalXidReason(fatal) : (g.ecc_uncorrected ?? 0) > 0 ? ECC_UNCORRECTED : g.remap_failure ? REMAP_FAILURE : null;
      const lastXid = g.xid_errors?.length ? g.xid_errors[g.xid_errors.length - 1]! : null;
      if (hardware) {
        await tx.$executeRaw`
          UPDATE gpus SET status = 'unhealthy', unhealthy_reason = ${hardware}, ecc_uncorrected = ${g.ecc_uncorrected ?? null}::int,
                 remap_failure = ${g.remap_failure ?? false}, last_xid = COALESCE(${lastXid}::int, last_xid),
                 last_xid_at = CASE WHEN ${lastXid}::int IS NULL THEN last_xid_at ELSE now() END, updated_at = now()
           WHERE node_id = ${nodeId}::uuid AND uuid = ${g.uuid} AND status <> 'missing'`;
      } else if (!g.healthy) {
        await tx.$executeRaw`
          UPDATE gpus SET status = 'unhealthy', unhealthy_reason = COALESCE(unhealthy_reason, ${AGENT_REPORTED}),
                 last_xid = COALESCE(${lastXid}::int, last_xid), updated_at = now()
           WHERE node_id = ${nodeId}::uuid AND uuid = ${g.uuid} AND status <> 'missing'`;
      } else {
        await tx.$executeRaw`
          UPDATE gpus SET status = 'available', unhealthy_reason = NULL, updated_at = now()
           WHERE node_id = ${nodeId}::uuid AND uuid = ${g.uuid} AND status = 'unhealthy' AND unhealthy_reason = ${AGENT_REPORTED}`;
        if (lastXid !== null) {
          await tx.$executeRaw`UPDATE gpus SET last_xid = ${lastXid}::int, last_xid_at = now() WHERE node_id = ${nodeId}::uuid AND uuid = ${g.uuid}`;
        }
      }
    }

    return tx.node.findUniqueOrThrow({ where: { id: nodeId }, select: nodeSelect });
  }).then(async (node) => ({ node, assignments: await assignmentsForNode(nodeId) }));
}
