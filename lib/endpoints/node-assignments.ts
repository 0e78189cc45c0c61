import "server-only";
import { pool } from "@/lib/db/client";
import { env } from "@/lib/env";
import { workloadAccessSecret } from "@/lib/fleet/access-secret";
import type { ReplicaAssignment } from "@/lib/fleet/assignments";
import { replicaReportToken } from "./replica-token";

/**
 * The endpoint replicas a node must serve now: for each, the GPUs it holds there, the placement
 * (each replica row is one, attempt 1 with its own fence), the serving image, where to report
 * samples and logs, the replica-scoped token the serving container reports with, and the access
 * secret the agent's guard asks of the gateway's requests.
 */
export async function replicaAssignmentsForNode(nodeId: string): Promise<ReplicaAssignment[]> {
  const { rows } = await pool().query<{
    replica_id: string;
    fence: string;
    endpoint_id: string;
    endpoint_name: string;
    model: string;
    image: string | null;
    serving_port: number;
    gpu_ids: string[];
  }>(
    `SELECT r.id AS replica_id, r.fence::text AS fence, e.id AS endpoint_id, e.name AS endpoint_name, e.model, e.image, e.serving_port, array_agg(g.id ORDER BY g.index) AS gpu_ids
       FROM endpoint_replicas r JOIN endpoints e ON e.id = r.endpoint_id JOIN gpus g ON g.allocated_replica_id = r.id
      WHERE r.node_id = $1 AND r.status <> 'stopped' GROUP BY r.id, e.id ORDER BY r.started_at`,
    [nodeId],
  );
  return rows.map((r) => {
    const image = r.image ?? env().DEFAULT_SERVE_IMAGE;
    return {
      kind: "endpoint_replica" as const,
      replica_id: r.replica_id,
      endpoint_id: r.endpoint_id,
      endpoint_name: r.endpoint_name,
      model: r.model,
      attempt: 1,
      fence: r.fence,
      gpu_ids: r.gpu_ids,
      ...(image ? { image } : {}),
      metrics_path: `/api/endpoints/${r.endpoint_id}/metrics`,
      serving_port: r.serving_port,
      address_path: `/api/endpoints/${r.endpoint_id}/replicas/${r.replica_id}/address`,
      logs_path: `/api/endpoints/${r.endpoint_id}/replicas/${r.replica_id}/logs`,
      report_token: replicaReportToken(r.replica_id, r.fence),
      access_secret: workloadAccessSecret("replica", r.replica_id, r.fence),
    };
  });
}
