import "server-only";
import type { Tx } from "@/lib/db/client";
import { unsatisfiable } from "@/lib/errors";

/**
 * Refuses (422) work of one or more copies that each run on one node (an endpoint's replicas, a
 * pod) when it could never run: its minimum copies need more GPUs than the tenant's whole quota,
 * or no node of the fleet (of its cluster) that runs containers has `per_node` GPUs of the type.
 * `paths` name the request fields the refusal points at.
 */
export async function assertFitsOnNodes(
  tx: Tx,
  tenantQuota: number,
  e: { gpu_type: string; per_node: number; copies: number; cluster_id: string | null },
  paths = { copies: "min_replicas", per_node: "gpus_per_replica", noun: "replica" },
) {
  const needed = e.per_node * e.copies;
  if (needed > tenantQuota) {
    throw unsatisfiable(
      `${e.copies} ${paths.noun}(s) of ${e.per_node} GPUs need ${needed} GPUs but the tenant's whole quota is ${tenantQuota}`,
      [{ path: paths.copies, message: `Needs ${needed} GPUs, over the quota of ${tenantQuota}` }],
    );
  }
  const [{ biggest }] = await tx.$queryRaw<[{ biggest: number }]>`
    SELECT COALESCE(max(n), 0)::int AS biggest FROM (
      SELECT count(*) AS n FROM gpus g JOIN nodes nd ON nd.id = g.node_id
       WHERE g.gpu_type = ${e.gpu_type} AND g.status <> 'missing' AND nd.containers AND (${e.cluster_id}::uuid IS NULL OR nd.cluster_id = ${e.cluster_id}::uuid)
       GROUP BY g.node_id) x`;
  if (biggest < e.per_node) {
    throw unsatisfiable(
      biggest === 0
        ? `The fleet has no ${e.gpu_type} GPUs on nodes that run containers${e.cluster_id ? " in that cluster" : ""}`
        : `No node that runs containers has ${e.per_node} ${e.gpu_type} GPUs (the largest has ${biggest}); a ${paths.noun} runs on one node`,
      [
        {
          path: biggest === 0 ? "gpu_type" : paths.per_node,
          message: biggest === 0 ? `No ${e.gpu_type} GPUs` : `At most ${biggest} per node`,
        },
      ],
    );
  }
}
