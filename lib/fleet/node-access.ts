import "server-only";
import type { Principal } from "@/lib/auth/principal";
import type { Tx } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { forbidden, notFound } from "@/lib/errors";
import { LOCK_NODE } from "./statements";

/** Fleet objects are visible to operators, and to the agent keys of their own cluster (or node) only. */
export function fleetScope(p: Principal): { clusterId?: string; nodeId?: string } {
  if (p.kind === "operator") return {};
  if (p.kind === "agent") return { clusterId: p.clusterId, ...(p.nodeId ? { nodeId: p.nodeId } : {}) };
  throw forbidden("Fleet hardware is visible to operators and agents");
}

/** Locks the node row for a state change; another cluster's node is not found. */
export async function lockNodeOrThrow(tx: Tx, p: Principal, nodeId: string) {
  const scope = fleetScope(p);
  const rows = await run(tx, LOCK_NODE, [nodeId]);
  const node = rows[0];
  if (!node || (scope.clusterId && node.cluster_id !== scope.clusterId) || (scope.nodeId && node.id !== scope.nodeId))
    throw notFound("Node");
  return node;
}
