import type { z } from "zod";
import type { listNodeWorkflows } from "@/lib/fleet/node-workflows";
import type { workflowJsonSchema } from "./schemas";

type NodeWorkflow = Awaited<ReturnType<typeof listNodeWorkflows>>[number];

/** A workflow with its steps as the API answers it. */
export function workflowJson(w: NodeWorkflow): z.infer<typeof workflowJsonSchema> {
  return {
    id: w.id,
    node_id: w.nodeId,
    kind: w.kind,
    status: w.status,
    trigger: w.trigger,
    reason: w.reason,
    requested_by: w.requestedBy,
    details: w.details,
    outcome: w.outcome,
    started_at: w.startedAt.toISOString(),
    finished_at: w.finishedAt?.toISOString() ?? null,
    steps: w.steps.map((s) => ({
      name: s.name,
      status: s.status,
      started_at: s.startedAt.toISOString(),
      finished_at: s.finishedAt?.toISOString() ?? null,
      message: s.message,
      lease_token: s.leaseToken,
      details: s.details,
    })),
  };
}
