import "server-only";
import { assertOperator, type Principal } from "@/lib/auth/principal";
import { db, pool } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import { listNodeWorkflows } from "@/lib/fleet/node-workflows";
import { provisioningView, type ProvisioningWorkflow } from "./plan";
import type { ProvisioningJson } from "./schemas";

/** The node's provisionings, newest first (operators only: a tenant never sees a BMC or its answers). */
export async function nodeProvisionings(p: Principal, nodeId: string, limit = 5): Promise<ProvisioningJson[]> {
  assertOperator(p);
  const workflows = await listNodeWorkflows(pool(), nodeId, 20);
  return workflows
    .filter((w) => w.kind === "provisioning")
    .slice(0, limit)
    .map((w) => provisioningView(w as ProvisioningWorkflow));
}

/** The node's latest provisioning; not found when the node does not exist or was never provisioned. */
export async function latestProvisioningOrThrow(p: Principal, nodeId: string): Promise<ProvisioningJson> {
  assertOperator(p);
  if (!(await db().node.count({ where: { id: nodeId } }))) throw notFound("Node");
  const [latest] = await nodeProvisionings(p, nodeId, 1);
  if (!latest) throw notFound("Provisioning");
  return latest;
}
