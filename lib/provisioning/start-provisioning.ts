import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { openBmc } from "@/lib/bmc/open-bmc";
import { db } from "@/lib/db/client";
import { invalidTransition } from "@/lib/errors";
import { lockNodeOrThrow } from "@/lib/fleet/node-access";
import { startNodeWorkflow } from "@/lib/fleet/node-workflows";
import { provisioningView, type ProvisioningWorkflow } from "./plan";
import type { ProvisioningJson } from "./schemas";

/**
 * Starts provisioning a node from an image through its BMC: the node moves to `provisioning` (from
 * registered, maintenance or quarantined, also while offline) and a provisioning workflow begins,
 * in one transaction; the runner (advance-provisionings.ts) takes it from there. Refused before
 * anything changes when the node has no BMC whose password opens here (409), when its state does
 * not allow it (409 invalid_transition), or while another workflow runs on it (409).
 */
export async function startProvisioning(actor: Actor, nodeId: string, body: { image_url: string }): Promise<ProvisioningJson> {
  assertOperator(actor.principal);
  await openBmc(nodeId);
  const workflow = await db().$transaction(async (tx) => {
    const node = await lockNodeOrThrow(tx, actor.principal, nodeId);
    const started = await startNodeWorkflow(tx, node, {
      kind: "provisioning",
      trigger: "operator",
      event: { kind: "provision" },
      reason: `provisioning ${body.image_url}`.slice(0, 500),
      actor: actor.principal.label,
      details: { image_url: body.image_url },
    });
    if (!started.ok) throw invalidTransition(started.reason);
    await recordAudit(tx, actor, {
      action: "node.provision",
      targetType: "node",
      targetId: nodeId,
      details: { image_url: body.image_url, workflow_id: started.workflow.id, from: node.status },
    });
    return started.workflow;
  });
  await emitEvent("provisioning/advance.requested", { reason: `provisioning of node ${nodeId} requested` });
  const view: ProvisioningWorkflow = {
    id: workflow.id,
    nodeId: workflow.node_id,
    status: "running",
    requestedBy: workflow.requested_by,
    details: workflow.details as Record<string, unknown>,
    outcome: null,
    startedAt: workflow.started_at,
    finishedAt: null,
    steps: [],
  };
  return provisioningView(view);
}
