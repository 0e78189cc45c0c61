import { statement } from "@/lib/db/statement";

// The fleet gauges' statements (lib/db/statement.ts), read once per scrape, checked against the
// migrated database by tests/integration/sql-statements.test.ts.

export const GAUGE_GPUS = statement("observability.gpus", {
  params: [],
  columns: { cluster: "text", gpu_type: "text", state: "text", n: "int4" },
  text: `SELECT c.name AS cluster, g.gpu_type,
              CASE WHEN g.status = 'missing' THEN 'missing' WHEN g.status = 'unhealthy' THEN 'unhealthy'
                   WHEN g.allocated_job_id IS NOT NULL OR g.allocated_replica_id IS NOT NULL OR g.allocated_pod_id IS NOT NULL THEN 'allocated' ELSE 'idle' END AS state, count(*)::int AS n
         FROM gpus g JOIN nodes n ON n.id = g.node_id JOIN clusters c ON c.id = n.cluster_id GROUP BY 1, 2, 3`,
});

export const GAUGE_NODES = statement("observability.nodes", {
  params: [],
  columns: { cluster: "text", status: "text", n: "int4" },
  text: `SELECT c.name AS cluster, n.status, count(*)::int AS n FROM nodes n JOIN clusters c ON c.id = n.cluster_id GROUP BY 1, 2`,
});

/** Per GPU in service: health and last utilization, at most $1 rows. */
export const GAUGE_PER_GPU = statement("observability.per-gpu", {
  params: ["int8"],
  columns: { cluster: "text", node: "text", gpu: "int4", gpu_type: "text", healthy: "bool", util: "float8?" },
  text: `SELECT c.name AS cluster, n.hostname AS node, g.index AS gpu, g.gpu_type, g.status = 'available' AS healthy, m.util
         FROM gpus g JOIN nodes n ON n.id = g.node_id JOIN clusters c ON c.id = n.cluster_id
         LEFT JOIN LATERAL (SELECT utilization_sum / samples AS util FROM gpu_metrics_1m WHERE gpu_id = g.id AND bucket > now() - interval '5 minutes'
                             ORDER BY bucket DESC LIMIT 1) m ON true
        WHERE g.status <> 'missing' ORDER BY c.name, n.hostname, g.index LIMIT $1`,
});

export const GAUGE_QUEUE = statement("observability.queue", {
  params: [],
  columns: { priority: "int4", status: "text", n: "int4", oldest_s: "float8" },
  text: `SELECT priority, status, count(*)::int AS n, COALESCE(extract(epoch FROM now() - min(submitted_at)), 0)::float AS oldest_s
         FROM jobs WHERE status IN ('queued', 'blocked') GROUP BY 1, 2`,
});

/** Automatic quarantines in the last $1 seconds. */
export const GAUGE_REMEDIATIONS = statement("observability.remediations", {
  params: ["float8"],
  columns: { used: "int4" },
  text: `SELECT count(*)::int AS used FROM remediations WHERE outcome = 'quarantined' AND created_at > now() - make_interval(secs => $1)`,
});

export const GAUGE_OUTBOX = statement("observability.outbox", {
  params: [],
  columns: { status: "text", n: "int4", oldest_s: "float8" },
  text: `SELECT status, count(*)::int AS n, COALESCE(extract(epoch FROM now() - min(created_at)), 0)::float AS oldest_s FROM notifications WHERE status IN ('pending', 'failed') GROUP BY 1`,
});

export const GAUGE_RUNNING = statement("observability.running", {
  params: [],
  columns: { kind: "text", n: "int4" },
  text: `SELECT 'job' AS kind, count(*)::int AS n FROM jobs WHERE status = 'running'
       UNION ALL SELECT 'endpoint_replica', count(*)::int FROM endpoint_replicas WHERE status <> 'stopped'`,
});

/** Rows only, never their arrays: a scrape must not read the samples themselves. */
export const GAUGE_ROLLUP_QUEUE = statement("observability.rollup-queue", {
  params: [],
  columns: { n: "int4", oldest_s: "float8" },
  text: `SELECT count(*)::int AS n, COALESCE(extract(epoch FROM now() - min(created_at)), 0)::float AS oldest_s FROM gpu_metrics_1m_pending`,
});
