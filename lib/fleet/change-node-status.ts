import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db, txClient } from "@/lib/db/client";
import { runCount } from "@/lib/db/statement";
import { requeueJobsOnNodes } from "@/lib/jobs/requeue-lost-jobs";
import { interruptPodsOnNodes } from "@/lib/pods/interrupt-pods";
import { forbidden, invalidTransition } from "@/lib/errors";
import { lockNodeOrThrow } from "./node-access";
import { applyNodeTransition } from "./apply-node-transition";
import type { OperatorTarget } from "./node-lifecycle";
import { stopWorkflowIfLeft } from "./node-workflows";
import { nodeSelect } from "./node-schemas";
import { CLEAR_UNHEALTHY_GPUS } from "./statements";

/**
 * Operator lifecycle actions: drain, maintenance, quarantine, return to service. Returning a node
 * to service is the operator's word that it was inspected: its GPUs' hardware flags are cleared.
 */
export async function changeNodeStatus(actor: Actor, nodeId: string, target: OperatorTarget, reason?: string) {
  if (actor.principal.kind !== "operator") throw forbidden("Operator access required");
  const result = await db().$transaction(async (tx) => {
    const row = await lockNodeOrThrow(tx, actor.principal, nodeId);
    const why = reason ?? `operator set ${target}`;
    if (target === "available" && row.handover_due_since && row.status !== "available") {
      throw invalidTransition(
        "A handover is due on this node (a whole-node tenancy ended, or a workflow began, and none has passed since): start a handover; it returns the node to service once the node passes attestation",
      );
    }
    const t = await applyNodeTransition(tx, row, { kind: "operator", target }, why, actor.principal.label);
    if (!t.ok) throw invalidTransition(t.reason);
    // taking a node out of a handover or provisioning stops its workflow: the lease is revoked, so
    // the worker's next write is refused, and the workflow ends as cancelled
    const cancelled = await stopWorkflowIfLeft(tx, row, t, why);
    // work on a node taken out of service goes back to the queue, the tenant's retries untouched
    const leaves = t.changed && (target === "quarantined" || target === "maintenance");
    const requeued = leaves ? await requeueJobsOnNodes(tx, [nodeId], `node ${target}`, actor.principal.label) : [];
    // a pod is stateful: interrupted (and its tenant alerted), not silently moved
    const pods = leaves ? await interruptPodsOnNodes(txClient(tx), [nodeId], `its node was put in ${target}`, actor.principal.label) : [];
    let gpusCleared = 0;
    if (target === "available" && t.changed) {
      gpusCleared = await runCount(tx, CLEAR_UNHEALTHY_GPUS, [nodeId]);
    }
    await recordAudit(tx, actor, {
      action: `node.${target === "available" ? "returned_to_service" : target}`,
      targetType: "node",
      targetId: nodeId,
      details: {
        from: row.status,
        to: t.state.status,
        // an offline node keeps its status; what changed is the state it returns in
        ...(t.state.status === "offline" ? { returns_as: t.state.statusBeforeOffline } : {}),
        reason: why,
        gpus_cleared: gpusCleared,
        jobs_requeued: requeued.length,
        pods_interrupted: pods.length,
        ...(cancelled ? { workflow_cancelled: cancelled } : {}),
      },
    });
    return {
      node: await tx.node.findUniqueOrThrow({ where: { id: nodeId }, select: nodeSelect }),
      wake: requeued.length > 0 || pods.length > 0 || target === "available",
    };
  });
  if (result.wake) await emitEvent("scheduler/run.requested", { reason: `node ${target}` });
  // replicas leave a node that left service, and may be placed on one that came back
  await emitEvent("endpoints/reconcile.requested", { reason: `node ${target}` });
  // what fires depends on the node's state (a node in maintenance is not unreachable, say)
  await emitEvent("alerts/evaluate.requested", { reason: `node ${target}` });
  return result.node;
}
