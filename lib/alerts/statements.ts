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
  columns: {
    job_id: "uuid",
    job_name: "text",
    tenant_id: "uuid",
    cluster_id: "uuid?",
    gpus: "int4",
    running_s: "float8",
    minutes_observed: "int4",
    peak_minute_avg_pct: "float8?",
    avg_pct: "float8?",
  },
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
  columns: {
    gpu_id: "uuid",
    gpu_index: "int4",
    node_id: "uuid",
    hostname: "text",
    cluster_id: "uuid",
    hot_minutes: "int4",
    peak_c: "float8",
  },
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
  columns: {
    node_id: "uuid",
    hostname: "text",
    cluster_id: "uuid",
    status: "text",
    status_before_offline: "text?",
    silent_s: "float8",
    last_heartbeat_at: "timestamptz?",
  },
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
  columns: {
    gpu_id: "uuid",
    gpu_index: "int4",
    gpu_uuid: "text",
    node_id: "uuid",
    hostname: "text",
    cluster_id: "uuid",
    unhealthy_reason: "text",
    last_xid_at: "timestamptz?",
    allocated_job_id: "uuid?",
  },
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
  columns: {
    id: "uuid",
    name: "text",
    tenant_id: "uuid",
    cluster_id: "uuid?",
    status: "text",
    sla_p95_ms: "int4?",
    sla_availability_pct: "float8?",
  },
  text: `SELECT e.id, e.name, e.tenant_id, e.cluster_id, e.status, e.sla_p95_ms, e.sla_availability_pct FROM endpoints e
      WHERE e.deleted_at IS NULL AND e.status NOT IN ('provisioning', 'stopped') AND (e.sla_p95_ms IS NOT NULL OR e.sla_availability_pct IS NOT NULL)
        AND ($1::uuid IS NULL OR e.cluster_id = $1::uuid
             OR EXISTS (SELECT 1 FROM endpoint_replicas r JOIN nodes n ON n.id = r.node_id WHERE r.endpoint_id = e.id AND r.status <> 'stopped' AND n.cluster_id = $1::uuid))`,
});

/** The enabled rules ($1: only these ids; NULL: all), XID and temperature first so remediation sees hardware faults early. */
export const ENABLED_RULES = statement("alerts.enabled-rules", {
  params: ["uuid[]?"],
  columns: {
    id: "uuid",
    name: "text",
    rule_type: "text",
    cluster_id: "uuid?",
    threshold: "float8",
    window_s: "int4",
    occurrences: "int4",
    severity: "text",
    enabled: "bool",
    notify: "bool",
    auto_remediate: "bool",
  },
  text: `SELECT id, name, rule_type, cluster_id, threshold, window_s, occurrences, severity, enabled, notify, auto_remediate
       FROM alert_rules WHERE enabled AND ($1::uuid[] IS NULL OR id = ANY($1::uuid[]))
      ORDER BY CASE rule_type WHEN 'gpu_xid' THEN 0 WHEN 'gpu_temperature' THEN 1 ELSE 2 END, created_at`,
});

/** Fires new events of rule $1 and refreshes its firing ones, one per violation (arrays $4–$12 by position). */
export const UPSERT_FIRING_EVENTS = statement("alerts.upsert-firing-events", {
  params: ["uuid", "text", "text", "text[]", "text[]", "text[]", "text[]", "uuid[]", "uuid[]", "uuid[]", "text[]", "jsonb[]"],
  columns: { id: "uuid", dedupe_key: "text", inserted: "bool" },
  text: `INSERT INTO alert_events (rule_id, rule_type, severity, dedupe_key, subject_type, subject_id, subject_label, cluster_id, node_id, tenant_id, message, details)
     SELECT $1, $2, $3, x.* FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::uuid[], $9::uuid[], $10::uuid[], $11::text[], $12::jsonb[])
       AS x(dedupe_key, subject_type, subject_id, subject_label, cluster_id, node_id, tenant_id, message, details)
     ON CONFLICT (dedupe_key) WHERE status = 'firing'
     DO UPDATE SET last_seen_at = now(), message = EXCLUDED.message, details = EXCLUDED.details, severity = EXCLUDED.severity
     RETURNING id, dedupe_key, (xmax = 0) AS inserted`,
});

/** Resolves rule $1's firing events whose dedupe keys are not in $2. */
export const RESOLVE_CLEARED_EVENTS = statement("alerts.resolve-cleared-events", {
  params: ["uuid", "text[]"],
  columns: { id: "uuid" },
  text: `UPDATE alert_events SET status = 'resolved', resolved_at = now()
      WHERE rule_id = $1 AND status = 'firing' AND NOT (dedupe_key = ANY($2::text[])) RETURNING id`,
});

/** A disabled rule stops speaking for its subjects. */
export const RESOLVE_DISABLED_RULES_EVENTS = statement("alerts.resolve-disabled-rules-events", {
  params: [],
  columns: {},
  text: `UPDATE alert_events e SET status = 'resolved', resolved_at = now() FROM alert_rules r WHERE r.id = e.rule_id AND NOT r.enabled AND e.status = 'firing'`,
});

/** Platform events without a rule: a moved job resolves when it runs again (or ends), an interrupted pod likewise; a capped remediation once a human acted; a node's changed address once acknowledged. */
export const RESOLVE_SYSTEM_EVENTS = statement("alerts.resolve-system-events", {
  params: [],
  columns: { id: "uuid", rule_type: "text" },
  text: `UPDATE alert_events e SET status = 'resolved', resolved_at = now()
      WHERE e.status = 'firing' AND (
        (e.rule_type = 'job_moved' AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id::text = e.subject_id AND j.status IN ('queued', 'blocked')))
        -- an interrupted pod: once it runs again or is stopped or terminated (a tenant's action resolves it at once)
        OR (e.rule_type = 'pod_interrupted' AND NOT EXISTS (SELECT 1 FROM pods p WHERE p.id::text = e.subject_id AND p.status IN ('failed', 'pending', 'starting')))
        -- a node's changed address: once an operator has acknowledged it
        OR (e.rule_type = 'node_address_changed' AND e.acknowledged_at IS NOT NULL)
        OR (e.rule_type = 'remediation_capped' AND (
              NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = e.node_id AND n.status NOT IN ('quarantined', 'maintenance')
                                                     AND n.status_before_offline IS DISTINCT FROM 'quarantined' AND n.status_before_offline IS DISTINCT FROM 'maintenance')
              OR NOT EXISTS (SELECT 1 FROM alert_events f JOIN alert_rules r ON r.id = f.rule_id
                              WHERE f.status = 'firing' AND f.node_id = e.node_id AND r.auto_remediate))))
      RETURNING e.id, e.rule_type`,
});

/** Alertmanager targets: nodes by id ($1). */
export const NODES_BY_ID = statement("alerts.nodes-by-id", {
  params: ["uuid[]"],
  columns: { id: "uuid", cluster_id: "uuid", hostname: "text" },
  text: `SELECT id, cluster_id, hostname FROM nodes WHERE id = ANY($1::uuid[])`,
});

/** Alertmanager targets: GPUs by UUID ($1) and their nodes. */
export const GPUS_BY_UUID = statement("alerts.gpus-by-uuid", {
  params: ["text[]"],
  columns: { uuid: "text", gpu_id: "uuid", index: "int4", node_id: "uuid", cluster_id: "uuid", hostname: "text" },
  text: `SELECT g.uuid, g.id AS gpu_id, g.index, n.id AS node_id, n.cluster_id, n.hostname FROM gpus g JOIN nodes n ON n.id = g.node_id WHERE g.uuid = ANY($1::text[])`,
});

/** Alertmanager targets: nodes by hostname ($1), in any cluster. */
export const NODES_BY_HOSTNAME = statement("alerts.nodes-by-hostname", {
  params: ["text[]"],
  columns: { id: "uuid", cluster_id: "uuid", cluster_name: "text", hostname: "text" },
  text: `SELECT n.id, n.cluster_id, c.name AS cluster_name, n.hostname FROM nodes n JOIN clusters c ON c.id = n.cluster_id WHERE n.hostname = ANY($1::text[])`,
});

/** Fires Alertmanager's alerts as external events, one per element of the arrays (by position); a firing one is left as it is. */
export const FIRE_EXTERNAL_EVENTS = statement("alerts.fire-external-events", {
  params: ["text[]", "text[]", "text[]", "text[]", "uuid[]", "uuid[]", "text[]", "text[]", "jsonb[]"],
  columns: { id: "uuid", dedupe_key: "text" },
  text: `INSERT INTO alert_events (rule_type, dedupe_key, subject_type, subject_id, subject_label, cluster_id, node_id, severity, message, details)
           SELECT 'external', x.dedupe_key, x.subject_type, x.subject_id, x.subject_label, x.cluster_id, x.node_id, x.severity, x.message, x.details
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::uuid[], $6::uuid[], $7::text[], $8::text[], $9::jsonb[])
               AS x(dedupe_key, subject_type, subject_id, subject_label, cluster_id, node_id, severity, message, details)
           ON CONFLICT (dedupe_key) WHERE status = 'firing' DO NOTHING
           RETURNING id, dedupe_key`,
});

/** Resolves the firing external events with these dedupe keys ($1). */
export const RESOLVE_EXTERNAL_EVENTS = statement("alerts.resolve-external-events", {
  params: ["text[]"],
  columns: { id: "uuid" },
  text: `UPDATE alert_events SET status = 'resolved', resolved_at = now() WHERE status = 'firing' AND rule_type = 'external' AND dedupe_key = ANY($1::text[]) RETURNING id`,
});

/**
 * The faulty nodes ($1) still to decide, locked: not quarantined, not remediated since they last
 * returned to service, and (for those faulted by XID only, $2) still with a GPU unhealthy for it.
 */
export const NODES_TO_REMEDIATE = statement("alerts.nodes-to-remediate", {
  params: ["uuid[]", "uuid[]"],
  columns: { id: "uuid", hostname: "text", status: "text", status_before_offline: "text?" },
  text: `
        SELECT n.id, n.hostname, n.status, n.status_before_offline FROM nodes n
         WHERE n.id = ANY($1::uuid[])
           AND n.status <> 'quarantined' AND n.status_before_offline IS DISTINCT FROM 'quarantined'
           AND NOT EXISTS (
             SELECT 1 FROM remediations r
              WHERE r.node_id = n.id
                AND r.created_at > COALESCE((SELECT max(e.created_at) FROM node_events e WHERE e.node_id = n.id AND e.to_status = 'available'), '-infinity'))
           AND (n.id <> ALL($2::uuid[])
                OR EXISTS (SELECT 1 FROM gpus g WHERE g.node_id = n.id AND g.status = 'unhealthy' AND g.unhealthy_reason LIKE 'fatal_xid:%'))
         ORDER BY n.id FOR UPDATE OF n`,
});

/** Automatic quarantines in the last $1 seconds (the blast-radius cap's window). */
export const QUARANTINES_IN_WINDOW = statement("alerts.quarantines-in-window", {
  params: ["int4"],
  columns: { used: "int4" },
  text: `
        SELECT count(*)::int AS used FROM remediations
         WHERE outcome = 'quarantined' AND created_at > clock_timestamp() - make_interval(secs => $1::int)`,
});

/** Each tenant whose jobs ($2) moved off the node $3 sees why ($1); it resolves once the job runs again. */
export const FIRE_JOBS_MOVED = statement("alerts.fire-jobs-moved", {
  params: ["text", "uuid[]", "uuid"],
  columns: {},
  text: `
            INSERT INTO alert_events (rule_type, dedupe_key, subject_type, subject_id, subject_label, cluster_id, node_id, tenant_id, severity, message, details)
            SELECT 'job_moved', 'job_moved:' || j.id, 'job', j.id::text, j.name, n.cluster_id, n.id, j.tenant_id, 'warning',
                   'Job ' || j.name || ' was moved off node ' || n.hostname || ' after a hardware fault; it is queued to run elsewhere and its retries were not spent',
                   jsonb_build_object('node', n.hostname, 'cause', $1::text)
              FROM jobs j, nodes n WHERE j.id = ANY($2::uuid[]) AND n.id = $3::uuid
            ON CONFLICT (dedupe_key) WHERE status = 'firing' DO UPDATE SET last_seen_at = now(), details = EXCLUDED.details, message = EXCLUDED.message`,
});

/**
 * Remediations past the cap, one per element of $1–$4 (node, cause, summary, alert event): each
 * logged, and a critical alert that calls a human. $5 used in the window, $6 the cap, $7 the
 * window in seconds, $8 in minutes.
 */
export const RECORD_CAPPED_REMEDIATIONS = statement("alerts.record-capped-remediations", {
  params: ["uuid[]", "text[]", "text[]", "uuid[]", "int4", "int4", "int4", "int4"],
  columns: { id: "uuid", inserted: "bool" },
  text: `
              WITH c AS (
                SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[])
                  AS c(node_id, cause, summary, alert_event_id)
              ), logged AS (
                INSERT INTO remediations (node_id, alert_event_id, cause, outcome, details)
                SELECT c.node_id, c.alert_event_id, c.cause, 'capped',
                       jsonb_build_object('hostname', n.hostname, 'summary', c.summary, 'used_in_window', $5::int, 'cap', $6::int, 'window_s', $7::int)
                  FROM c JOIN nodes n ON n.id = c.node_id
              )
              INSERT INTO alert_events (rule_type, dedupe_key, subject_type, subject_id, subject_label, cluster_id, node_id, severity, message, details)
              SELECT 'remediation_capped', 'remediation_capped:' || n.id, 'node', n.id::text, n.hostname, n.cluster_id, n.id, 'critical',
                     'Automatic quarantine of ' || n.hostname || ' (' || c.summary || ') was not done: ' || $6::int || ' automatic quarantines in '
                       || $8::int || ' minutes reached the cap. Inspect the node and quarantine or return it by hand.',
                     jsonb_build_object('cause', c.cause, 'summary', c.summary, 'cap', $6::int, 'window_s', $7::int, 'used_in_window', $5::int)
                FROM c JOIN nodes n ON n.id = c.node_id
              ON CONFLICT (dedupe_key) WHERE status = 'firing' DO UPDATE SET last_seen_at = now()
              RETURNING id, (xmax = 0) AS inserted`,
});
