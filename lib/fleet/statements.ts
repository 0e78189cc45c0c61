import { statement } from "@/lib/db/statement";

// The fleet's raw statements (lib/db/statement.ts): each declares its parameters and row, checked
// against the migrated database by tests/integration/sql-statements.test.ts.

/** The fleet KPIs of API.md's dashboard. Utilization: mean over GPUs that reported in the last 5 minutes. */
export const FLEET_SUMMARY = statement("fleet.summary", {
  params: ["uuid?"],
  columns: {
    gpus_total: "int4",
    gpus_unhealthy: "int4",
    gpus_schedulable: "int4",
    gpus_allocated: "int4",
    utilization_avg_pct: "float8?",
    nodes_online: "int4",
    nodes_offline: "int4",
    nodes_quarantined: "int4",
  },
  text: `WITH g AS (
       SELECT g.id, g.status, (g.allocated_job_id IS NOT NULL OR g.allocated_replica_id IS NOT NULL OR g.allocated_pod_id IS NOT NULL) AS allocated, n.status AS node_status FROM gpus g JOIN nodes n ON n.id = g.node_id
        WHERE ($1::uuid IS NULL OR n.cluster_id = $1::uuid) AND g.status <> 'missing'
     ), recent AS (
       SELECT sum(m.utilization_sum) / nullif(sum(m.samples), 0) AS util
         FROM gpu_metrics_1m m JOIN g ON g.id = m.gpu_id WHERE m.bucket >= date_trunc('minute', now()) - interval '5 minutes'
     )
     SELECT (SELECT count(*) FROM g)::int AS gpus_total,
            (SELECT count(*) FROM g WHERE status = 'unhealthy')::int AS gpus_unhealthy,
            (SELECT count(*) FROM g WHERE status = 'available' AND node_status = 'available' AND NOT allocated)::int AS gpus_schedulable,
            (SELECT count(*) FROM g WHERE allocated)::int AS gpus_allocated,
            (SELECT util FROM recent) AS utilization_avg_pct,
            (SELECT count(*) FROM nodes WHERE ($1::uuid IS NULL OR cluster_id = $1::uuid) AND status <> 'offline')::int AS nodes_online,
            (SELECT count(*) FROM nodes WHERE ($1::uuid IS NULL OR cluster_id = $1::uuid) AND status = 'offline')::int AS nodes_offline,
            (SELECT count(*) FROM nodes WHERE ($1::uuid IS NULL OR cluster_id = $1::uuid) AND status = 'quarantined')::int AS nodes_quarantined`,
});

/**
 * Every node and GPU (one row each; a node without GPUs has one row of NULL GPU columns) with each
 * GPU's last-minute utilization, its allocation and the reservation holding its node. $2 narrows
 * it to the rack $3/$4 (NULL: the nodes registered without one).
 */
export const FLEET_FLOOR = statement("fleet.floor", {
  params: ["uuid?", "bool", "text?", "text?"],
  columns: {
    node_id: "uuid",
    cluster_id: "uuid",
    cluster: "text",
    hostname: "text",
    pod: "text?",
    rack: "text?",
    node_status: "text",
    reserved_by: "text?",
    gpu_id: "uuid?",
    idx: "int4?",
    gpu_status: "text?",
    allocated: "bool?",
    util: "float8?",
    temp: "float4?",
  },
  text: `WITH latest AS (
       SELECT DISTINCT ON (gpu_id) gpu_id, utilization_sum / samples AS util, temperature_max AS temp
         FROM gpu_metrics_1m WHERE bucket >= date_trunc('minute', now()) - interval '3 minutes'
        ORDER BY gpu_id, bucket DESC
     ), held AS (
       SELECT DISTINCT ON (rn.node_id) rn.node_id, t.name AS reserved_by
         FROM reservation_nodes rn JOIN tenants t ON t.id = rn.tenant_id
        WHERE rn.live AND rn.starts_at <= now() AND rn.ends_at > now()
     )
     SELECT n.id AS node_id, c.id AS cluster_id, c.name AS cluster, n.hostname, n.pod, n.rack, n.status AS node_status, h.reserved_by,
            g.id AS gpu_id, g.index AS idx, g.status AS gpu_status,
            (g.allocated_job_id IS NOT NULL OR g.allocated_replica_id IS NOT NULL) AS allocated, l.util, l.temp
       FROM nodes n
       JOIN clusters c ON c.id = n.cluster_id
       LEFT JOIN held h ON h.node_id = n.id
       LEFT JOIN gpus g ON g.node_id = n.id AND g.status <> 'missing'
       LEFT JOIN latest l ON l.gpu_id = g.id
      WHERE ($1::uuid IS NULL OR n.cluster_id = $1::uuid)
        AND (NOT $2::bool OR (n.pod IS NOT DISTINCT FROM $3 AND n.rack IS NOT DISTINCT FROM $4))
      ORDER BY c.name, n.pod NULLS LAST, n.rack NULLS LAST, n.hostname, g.index`,
});

/** Node and GPU counts per cluster. */
export const CLUSTER_COUNTS = statement("fleet.cluster-counts", {
  params: [],
  columns: { cluster_id: "uuid", nodes: "int4", offline: "int4", gpus: "int4", unhealthy: "int4" },
  text: `SELECT n.cluster_id, count(DISTINCT n.id)::int AS nodes, count(DISTINCT n.id) FILTER (WHERE n.status = 'offline')::int AS offline,
            count(g.id) FILTER (WHERE g.status <> 'missing')::int AS gpus, count(g.id) FILTER (WHERE g.status = 'unhealthy')::int AS unhealthy
       FROM nodes n LEFT JOIN gpus g ON g.node_id = n.id GROUP BY 1`,
});
