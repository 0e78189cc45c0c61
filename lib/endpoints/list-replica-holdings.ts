import "server-only";
import { pool } from "@/lib/db/client";

/** For operators: every live replica with its tenant, node and GPUs, busiest nodes first. */
export async function replicaHoldings() {
  const { rows } = await pool().query<{
    replica_id: string;
    status: string;
    endpoint_id: string;
    endpoint_name: string;
    tenant_name: string;
    hostname: string;
    cluster_name: string;
    gpu_type: string;
    gpu_indexes: number[];
  }>(
    `SELECT r.id AS replica_id, r.status, e.id AS endpoint_id, e.name AS endpoint_name, t.name AS tenant_name, n.hostname, c.name AS cluster_name, r.gpu_type,
            array_agg(g.index ORDER BY g.index) AS gpu_indexes
       FROM endpoint_replicas r JOIN endpoints e ON e.id = r.endpoint_id JOIN tenants t ON t.id = r.tenant_id
       JOIN nodes n ON n.id = r.node_id JOIN clusters c ON c.id = n.cluster_id JOIN gpus g ON g.allocated_replica_id = r.id
      WHERE r.status <> 'stopped'
      GROUP BY r.id, e.id, t.name, n.hostname, c.name ORDER BY c.name, n.hostname, e.name LIMIT 2000`,
  );
  return rows;
}
