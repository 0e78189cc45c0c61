import "server-only";
import { isDeepStrictEqual } from "node:util";
import type { Actor } from "@/lib/auth/principal";
import { agentNodeOrThrow } from "@/lib/attestation/agent-node";
import type { WipeReportInput } from "@/lib/attestation/schemas";
import { emitEvent } from "@/lib/background/emit";
import { db } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import { conflict, invalidTransition, validationFailed } from "@/lib/errors";
import { RUNNING_WORKFLOW_OF_NODE } from "@/lib/fleet/workflow-statements";
import { INSERT_WIPE_REPORT, WIPE_REPORT_OF_WORKFLOW } from "./statements";

export interface WipeReportJson {
  id: string;
  node_id: string;
  workflow_id: string;
  result: "ok" | "failed";
  devices: WipeReportInput["devices"];
  created_at: string;
}

/**
 * POST /api/nodes/{id}/wipe: the agent's report of the wipe it ran for the node's handover, one
 * line per device (what was done, when, with what result). Accepted while the node is wiping, once
 * per handover: the same report sent again (a retry) is answered with the stored one, a different
 * one is a conflict. Its runner is woken to act on it.
 */
export async function recordWipeReport(
  actor: Actor,
  nodeId: string,
  input: WipeReportInput,
): Promise<{ created: boolean; report: WipeReportJson }> {
  input.devices.forEach((d, i) => {
    if (Date.parse(d.finished_at) < Date.parse(d.started_at))
      throw validationFailed([{ path: `devices.${i}.finished_at`, message: "must not be before started_at" }]);
  });
  const result = input.devices.every((d) => d.result === "ok") ? ("ok" as const) : ("failed" as const);
  const out = await db().$transaction(async (tx) => {
    const node = await agentNodeOrThrow(tx, actor.principal, nodeId);
    const [running] = await run(tx, RUNNING_WORKFLOW_OF_NODE, [node.id]);
    const wiping = node.status === "wiping" || node.status_before_offline === "wiping";
    if (!running || running.kind !== "handover" || (input.workflow_id && input.workflow_id !== running.id)) {
      const stored = input.workflow_id ? await runOne(tx, WIPE_REPORT_OF_WORKFLOW, [input.workflow_id]) : undefined;
      if (stored && isDeepStrictEqual(stored.devices, input.devices))
        return {
          created: false,
          id: stored.id,
          at: stored.created_at,
          workflowId: input.workflow_id!,
          result: stored.result as "ok" | "failed",
        };
      throw invalidTransition(
        "This node has no handover waiting for a wipe report" + (input.workflow_id ? ` (workflow ${input.workflow_id})` : ""),
      );
    }
    const existing = await runOne(tx, WIPE_REPORT_OF_WORKFLOW, [running.id]);
    if (existing) {
      if (isDeepStrictEqual(existing.devices, input.devices))
        return {
          created: false,
          id: existing.id,
          at: existing.created_at,
          workflowId: running.id,
          result: existing.result as "ok" | "failed",
        };
      throw conflict("A different wipe report for this handover was already received", [
        { path: "devices", message: "differs from the report received" },
      ]);
    }
    if (!wiping) throw invalidTransition(`The node is ${node.status}, not wiping: its handover is not at the wipe`);
    const row = (await runOne(tx, INSERT_WIPE_REPORT, [
      node.id,
      running.id,
      JSON.stringify(input.devices),
      result,
      actor.principal.label,
    ]))!;
    return { created: true, id: row.id, at: row.created_at, workflowId: running.id, result };
  });
  if (out.created) await emitEvent("fleet/handover.requested", { reason: `wipe report (${out.result})` });
  return {
    created: out.created,
    report: {
      id: out.id,
      node_id: nodeId,
      workflow_id: out.workflowId,
      result: out.result,
      devices: input.devices,
      created_at: out.at.toISOString(),
    },
  };
}
