import "server-only";
import type { AgentPrincipal } from "@/lib/auth/principal";
import { env } from "@/lib/env";
import { conflict, notFound, staleReport, validationFailed } from "@/lib/errors";
import { publishedPortProblem } from "@/lib/fleet/published-ports";
import { inTransaction } from "@/lib/db/transaction";
import type { ReplicaAddressInput } from "./schemas";

/**
 * Where a replica serves: the host port its node's agent published for the endpoint's serving
 * port. Only the agent of the replica's own node may say it (fenced: the replica's placement, while
 * it is live), and only as a port: the address is the node's own, as registered, so no report can
 * point the gateway anywhere but at a node of the fleet, and only a port of the agents' published
 * range (AGENT_PUBLISHED_PORTS): never another service of the node. Another live replica of the
 * node already on that port answers 409; a replica this agent never served, 404.
 */
export async function reportReplicaAddress(p: AgentPrincipal, endpointId: string, replicaId: string, input: ReplicaAddressInput) {
  const outside = publishedPortProblem(input.host_port, env().AGENT_PUBLISHED_PORTS);
  if (outside) throw validationFailed([{ path: "host_port", message: outside }]);
  return inTransaction(async (c) => {
    const { rows } = await c.query<{ live: boolean; fence_ok: boolean }>(
      `SELECT r.status <> 'stopped' AS live, (r.fence = $3 AND $4 = 1) AS fence_ok
         FROM endpoint_replicas r JOIN nodes n ON n.id = r.node_id
        WHERE r.id = $1 AND r.endpoint_id = $2 AND n.cluster_id = $5 AND ($6::uuid IS NULL OR n.id = $6::uuid)
        FOR UPDATE OF r`,
      [replicaId, endpointId, input.fence, input.attempt, p.clusterId, p.nodeId ?? null],
    );
    const replica = rows[0];
    if (!replica) throw notFound("Replica");
    if (!replica.fence_ok || !replica.live) throw staleReport();
    await c
      .query(`UPDATE endpoint_replicas SET host_port = $2 WHERE id = $1 AND host_port IS DISTINCT FROM $2`, [replicaId, input.host_port])
      .catch((e: { code?: string }) => {
        if (e.code === "23505")
          throw conflict("Another live replica of this node is on that port", [
            { path: "host_port", message: "Taken by another replica of this node" },
          ]);
        throw e;
      });
    return { accepted: true };
  });
}
