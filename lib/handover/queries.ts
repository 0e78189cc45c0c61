import "server-only";
import { assertOperator, type Principal } from "@/lib/auth/principal";
import { NODE_BY_ID } from "@/lib/attestation/node-statements";
import { db } from "@/lib/db/client";
import { runOne } from "@/lib/db/statement";
import { notFound } from "@/lib/errors";
import { listNodeWorkflows } from "@/lib/fleet/node-workflows";
import { workflowJson } from "./workflow-json";

/** GET /api/nodes/{id}/handovers: the node's latest workflows with their steps (operators only). */
export async function listHandoversOfNode(p: Principal, nodeId: string) {
  assertOperator(p);
  if (!(await runOne(db(), NODE_BY_ID, [nodeId]))) throw notFound("Node");
  return (await listNodeWorkflows(db(), nodeId, 20)).map(workflowJson);
}
