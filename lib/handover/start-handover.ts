import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db, txClient, type Tx } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { conflict, invalidTransition } from "@/lib/errors";
import { lockNodeOrThrow } from "@/lib/fleet/node-access";
import { getNodeWorkflow, startNodeWorkflow } from "@/lib/fleet/node-workflows";
import { LOCK_NODE } from "@/lib/fleet/statements";
import { MARK_HANDOVER_DUE, RUNNING_WORKFLOW_OF_NODE } from "@/lib/fleet/workflow-statements";
import type { StartHandoverInput } from "./schemas";
import { workflowJson } from "./workflow-json";

/** Wakes what a handover's start concerns: its runner, and the reconcilers that move replicas and pods off the node. */
async function wake(reason: string) {
  await emitEvent("fleet/handover.requested", { reason });
  await emitEvent("endpoints/reconcile.requested", { reason });
  await emitEvent("pods/reconcile.requested", { reason });
}

/**
 * POST /api/nodes/{id}/handover: an operator sends a node through a handover by hand: `full`
 * releases whatever runs there, wipes and inspects it (from service, or out of it); `inspect`
 * attests an out-of-service node again (after an operator looked at a failed one). The node
 * returns to service only if it passes.
 */
export async function startHandover(actor: Actor, nodeId: string, input: StartHandoverInput) {
  assertOperator(actor.principal);
  const reason =
    input.reason ?? (input.mode === "inspect" ? "re-inspection requested by an operator" : "handover requested by an operator");
  const workflowId = await db().$transaction(async (tx) => {
    const node = await lockNodeOrThrow(tx, actor.principal, nodeId);
    const [running] = await run(tx, RUNNING_WORKFLOW_OF_NODE, [node.id]);
    if (running) throw conflict(`A ${running.kind} is already running on this node (since ${running.started_at.toISOString()})`);
    const out = await startNodeWorkflow(tx, node, {
      kind: "handover",
      trigger: "operator",
      event: { kind: "handover", mode: input.mode },
      reason,
      actor: actor.principal.label,
      details: { mode: input.mode },
    });
    if (!out.ok) throw invalidTransition(out.reason);
    await recordAudit(tx, actor, {
      action: input.mode === "inspect" ? "node.reinspection_started" : "node.handover_started",
      targetType: "node",
      targetId: node.id,
      details: { from: node.status, workflow_id: out.workflow.id, reason },
    });
    return out.workflow.id;
  });
  await wake(`handover of node ${nodeId} started`);
  return workflowJson((await getNodeWorkflow(db(), workflowId))!);
}

/**
 * A whole-node tenancy ended on these nodes (a reservation reached its end or was released): each
 * node in service starts its handover now, in the caller's transaction; a node out of service (or
 * already in a workflow) is marked as owing one, so it returns to service only through a handover.
 * An offline node returns releasing. Answers the nodes whose handover started.
 */
export async function startHandoversAfterTenancy(
  tx: Tx,
  nodes: ReadonlyArray<{ node_id: string; ended_at: Date }>,
  why: string,
  actor: string,
): Promise<string[]> {
  const started: string[] = [];
  for (const { node_id: id, ended_at: endedAt } of [...nodes].sort((a, b) => (a.node_id < b.node_id ? -1 : 1))) {
    const [node] = await run(tx, LOCK_NODE, [id]);
    if (!node) continue;
    const [running] = await run(tx, RUNNING_WORKFLOW_OF_NODE, [id]);
    const effective = node.status === "offline" ? node.status_before_offline : node.status;
    if (!running && (effective === "available" || effective === "draining")) {
      const out = await startNodeWorkflow(tx, node, {
        kind: "handover",
        trigger: "tenancy_ended",
        event: { kind: "handover", mode: "full" },
        reason: why,
        actor,
        details: { mode: "full", tenancy_ended_at: endedAt.toISOString() },
      });
      if (out.ok) {
        started.push(id);
        continue;
      }
    }
    await run(txClient(tx), MARK_HANDOVER_DUE, [id]);
  }
  return started;
}
