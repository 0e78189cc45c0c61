import "server-only";
import { pool } from "@/lib/db/client";

/** The endpoint replicas a node must serve now, with the GPUs each holds there and where to report samples. */
export async function replicaAssignmentsForNode(nodeId: string) {
  const { rows } = await pool().query<{ replica_id: string; endpoint_id: string; endpoint_name: string; model: string; gpu_ids: string[] }>(
    `SELECT r.id AS replica_id, e.id AS endpoint_id, e.name AS endpoint_name, e.model, array_agg(g.id ORDER BY g.index) AS gpu_ids
       FROM endpoint_replicas r JOIN endpoints e ON e.id = r.endpoint_id JOIN gpus g ON g.allocated_replica_id = r.id
      WHERE r.node_id = $1 AND r.status <> 'stopped' GROUP BY r.id, e.id ORDER BY r.started_at`,
    [nodeId],
  );
  return rows.map((r) => ({
    kind: "endpoint_replica" as const,
    replica_id: r.replica_id,
    endpoint_id: r.endpoint_id,
    endpoint_name: r.endpoint_name,
    model: r.model,
    gpu_ids: r.gpu_ids,
    metrics_path: `/api/endpoints/${r.endpoint_id}/metrics`,
  }));
}
