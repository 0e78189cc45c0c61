import { statement } from "@/lib/db/statement";

// The alerts' raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts. lib/alerts/queries.ts keeps its own for now.

// One set-based statement per rule gathers what its evaluation needs, over the per-minute rollups
// and the registry; never a query per GPU. `$1` is the rule's cluster (NULL: the whole fleet).
// Each runs every evaluation: prepared once per connection.

/** GPUs in service and idle per cluster over the window $2 (seconds): unallocated and under $3 % for at least $4 minutes. */
export const IDLE_GPU_FACTS = statement("alerts.facts-idle-gpu", {
  params: ["uuid?", "int4", "float4", "int4"],
  columns: { cluster_id: "uuid", cluster_name: "text", gpus_in_service: "int4", gpus_idle: "int4" },
  prepare: true,
  text: `
WITH recent AS (
  SELECT gpu_id, max(utilization_max) AS util_max, count(*) AS minutes FROM gpu_metrics_1m
   WHERE bucket >= date_trunc('minute', now() - make_interval(secs => $2::int)) GROUP BY gpu_id
)
-- idle: unallocated, and observed for most of the window without real work (a GPU that only just
-- started reporting is not known to be idle yet)
SELECT c.id AS cluster_id, c.name AS cluster_name, count(g.id)::int AS gpus_in_service,
       count(g.id) FILTER (WHERE g.allocated_job_id IS NULL AND g.allocated_replica_id IS NULL AND g.allocated_pod_id IS NULL AND r.minutes >= $4::int AND r.util_max < $3::real)::int AS gpus_idle
  FROM clusters c
  JOIN nodes n ON n.cluster_id = c.id AND n.status = 'available'
  JOIN gpus g ON g.node_id = n.id AND g.status = 'available'
  LEFT JOIN recent r ON r.gpu_id = g.id
 WHERE $1::uuid IS NULL OR c.id = $1::uuid
 GROUP BY c.id`,
});

/** Running jobs and their GPUs' utilization over the window $2 (seconds). */
export const IDLE_ALLOCATION_FACTS = statement("alerts.facts-idle-allocation", {
  params: ["uuid?", "int4"],
  columns: { job_id: "uuid", job_name: "text", tenant_id: "uuid", cluster_id: "uuid?", gpus: "int4", running_s: "float8", minutes_observed: "int4", peak_minute_avg_pct: "float8?", avg_pct: "float8?" },
  prepare: true,
  text: `
SELECT j.id AS job_id, j.name AS job_name, j.tenant_id, (array_agg(DISTINCT n.cluster_id))[1] AS cluster_id,
       count(DISTINCT g.id)::int AS gpus,
       extract(epoch FROM now() - j.started_at)::float8 AS running_s,
       count(DISTINCT m.bucket)::int AS minutes_observed,
       max(m.utilization_sum / m.samples)::float8 AS peak_minute_avg_pct,
       (sum(m.utilization_sum) / NULLIF(sum(m.samples), 0))::float8 AS avg_pct
  FROM jobs j
  JOIN gpus g ON g.allocated_job_id = j.id
  JOIN nodes n ON n.id = g.node_id
  LEFT JOIN gpu_metrics_1m m ON m.gpu_id = g.id AND m.bucket >= date_trunc('minute', now() - make_interval(secs => $2::int))
 WHERE j.status = 'running' AND j.started_at <= now() - make_interval(secs => $2::int)
   AND ($1::uuid IS NULL OR n.cluster_id = $1::uuid)
 GROUP BY j.id`,
});

/** GPUs at or above $3 °C in some minute of the window $2 (seconds). */
export const TEMPERATURE_FACTS = statement("alerts.facts-temperature", {
  params: ["uuid?", "int4", "float4"],
  columns: { gpu_id: "uuid", gpu_index: "int4", node_id: "uuid", hostname: "text", cluster_id: "uuid", hot_minutes: "int4", peak_c: "float8" },
  prepare: true,
  text: `
SELECT g.id AS gpu_id, g.index AS gpu_index, n.id AS node_id, n.hostname, n.cluster_id,
       count(*) FILTER (WHERE m.temperature_max >= $3::real)::int AS hot_minutes, max(m.temperature_max)::float8 AS peak_c
  FROM gpu_metrics_1m m JOIN gpus g ON g.id = m.gpu_id JOIN nodes n ON n.id = g.node_id
 WHERE m.bucket >= date_trunc('minute', now() - make_interval(secs => $2::int))
   AND ($1::uuid IS NULL OR n.cluster_id = $1::uuid)
 GROUP BY g.id, n.id
HAVING count(*) FILTER (WHERE m.temperature_max >= $3::real) > 0`,
});

/** Nodes silent for longer than $2 seconds. */
export const UNREACHABLE_FACTS = statement("alerts.facts-unreachable", {
  params: ["uuid?", "int4"],
  columns: { node_id: "uuid", hostname: "text", cluster_id: "uuid", status: "text", status_before_offline: "text?", silent_s: "float8", last_heartbeat_at: "timestamptz?" },
  prepare: true,
  text: `
SELECT n.id AS node_id, n.hostname, n.cluster_id, n.status, n.status_before_offline,
       extract(epoch FROM now() - COALESCE(n.last_heartbeat_at, n.created_at))::float8 AS silent_s, n.last_heartbeat_at
  FROM nodes n
 WHERE COALESCE(n.last_heartbeat_at, n.created_at) < now() - make_interval(secs => $2::int)
   AND ($1::uuid IS NULL OR n.cluster_id = $1::uuid)`,
});

/** GPUs unhealthy after a fatal XID. */
export const XID_FACTS = statement("alerts.facts-xid", {
  params: ["uuid?"],
  columns: { gpu_id: "uuid", gpu_index: "int4", gpu_uuid: "text", node_id: "uuid", hostname: "text", cluster_id: "uuid", unhealthy_reason: "text", last_xid_at: "timestamptz?", allocated_job_id: "uuid?" },
  prepare: true,
  text: `
SELECT g.id AS gpu_id, g.index AS gpu_index, g.uuid AS gpu_uuid, n.id AS node_id, n.hostname, n.cluster_id,
       g.unhealthy_reason, g.last_xid_at, g.allocated_job_id
  FROM gpus g JOIN nodes n ON n.id = g.node_id
 WHERE g.status = 'unhealthy' AND g.unhealthy_reason LIKE 'fatal_xid:%'
   AND ($1::uuid IS NULL OR n.cluster_id = $1::uuid)`,
});

/** Endpoints serving (not provisioning or stopped) with SLA targets, in the cluster $1 (NULL: all). */
export const SLA_ENDPOINTS = statement("alerts.sla-endpoints", {
  params: ["uuid?"],
  columns: { id: "uuid", name: "text", tenant_id: "uuid", cluster_id: "uuid?", status: "text", sla_p95_ms: "int4?", sla_availability_pct: "float8?" },
  text: `SELECT e.id, e.name, e.tenant_id, e.cluster_id, e.status, e.sla_p95_ms, e.sla_availability_pct FROM endpoints e
      WHERE e.deleted_at IS NULL AND e.status NOT IN ('provisioning', 'stopped') AND (e.sla_p95_ms IS NOT NULL OR e.sla_availability_pct IS NOT NULL)
        AND ($1::uuid IS NULL OR e.cluster_id = $1::uuid
             OR EXISTS (SELECT 1 FROM endpoint_replicas r JOIN nodes n ON n.id = r.node_id WHERE r.endpoint_id = e.id AND r.status <> 'stopped' AND n.cluster_id = $1::uuid))`,
});
