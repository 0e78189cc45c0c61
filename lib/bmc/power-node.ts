import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db, pool } from "@/lib/db/client";
import { conflict } from "@/lib/errors";
import { runningWorkflowOf } from "@/lib/fleet/node-workflows";
import { isRedfishError } from "@/lib/redfish/errors";
import { setPower } from "@/lib/redfish/operations";
import type { PowerAction } from "@/lib/redfish/resources";
import { withNodeSystem, redfishFailureToAppError } from "./node-redfish";
import { openBmc } from "./open-bmc";

/**
 * Powers a node on, off or restarts it through its BMC, with a ResetType the BMC lists; nothing is
 * sent when it is already in that state. Answers once the BMC accepted the reset (the power state
 * follows on the BMC's time). A BMC that fails answers 502 (504 when it ran out of time) saying how.
 */
export async function powerNode(actor: Actor, nodeId: string, action: PowerAction) {
  assertOperator(actor.principal);
  const opened = await openBmc(nodeId);
  // a provisioning or handover owns the node's power while it runs (its worker holds the lease)
  const running = await runningWorkflowOf(pool(), nodeId);
  if (running)
    throw conflict(`A ${running.kind} is running on this node: stop it first (put the node in maintenance), then power it`, [
      { path: "node_id", message: `${running.kind} running` },
    ]);
  try {
    // an operator waits for this answer: fewer repeats than a background step makes (about 2 s of backoff)
    const outcome = await withNodeSystem(opened, (c, system) => setPower(c, system.path, action), { timing: { retries: 2 } });
    await db().$transaction((tx) =>
      recordAudit(tx, actor, {
        action: "node.power",
        targetType: "node",
        targetId: nodeId,
        details: { action, reset_type: outcome.reset_type, power_state_before: outcome.power_state_before },
      }),
    );
    return {
      action,
      reset_type: outcome.reset_type,
      power_state_before: outcome.power_state_before,
      accepted_at: new Date().toISOString(),
    };
  } catch (e) {
    if (isRedfishError(e)) throw redfishFailureToAppError(e);
    throw e;
  }
}
