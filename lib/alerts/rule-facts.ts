import "server-only";
import { pool } from "@/lib/db/client";
import { slaFacts } from "@/lib/endpoints/endpoint-sla";
import { computeSla } from "@/lib/endpoints/sla";
import type { RuleFacts, RuleForEvaluation, SlaFacts } from "./evaluate-rule";
import { IDLE_UTILIZATION_PCT } from "./rule-types";

// One set-based statement per rule gathers what its evaluation needs, over the per-minute rollups
// and the registry; never a query per GPU. `$1` is the rule's cluster (NULL: the whole fleet).

const IDLE_GPU_SQL = `
WITH recent AS (
  SELECT gpu_id, max(utilization_max) AS util_max, count(*) AS minutes FROM gpu_metrics_1m
   WHERE bucket >= date_trunc('minute', now() - make_interval(secs => $2::int)) GROUP BY gpu_id
)
-- idle: unallocated, and observed for most of the window without real work (a GPU that only just
-- started reporting is not known to be idle yet)
SELECT c.id AS cluster_id, c.name AS cluster_name, count(g.id)::int AS gpus_in_service,
       count(g.id) FILTER (WHERE g.allocated_job_id IS NULL AND g.allocated_replica_id IS NULL AND r.minutes >= $4::int AND r.util_max < $3::real)::int AS gpus_idle
  FROM clusters c
  JOIN nodes n ON n.cluster_id = c.id AND n.status = 'available'
  JOIN gpus g ON g.node_id = n.id AND g.status = 'available'
  LEFT JOIN recent r ON r.gpu_id = g.id
 WHERE $1::uuid IS NULL OR c.id = $1::uuid
 GROUP BY c.id`;

const IDLE_ALLOCATION_SQL = `
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
 GROUP BY j.id`;

const TEMPERATURE_SQL = `
SELECT g.id AS gpu_id, g.index AS gpu_index, n.id AS node_id, n.hostname, n.cluster_id,
       count(*) FILTER (WHERE m.temperature_max >= $3::real)::int AS hot_minutes, max(m.temperature_max)::float8 AS peak_c
  FROM gpu_metrics_1m m JOIN gpus g ON g.id = m.gpu_id JOIN nodes n ON n.id = g.node_id
 WHERE m.bucket >= date_trunc('minute', now() - make_interval(secs => $2::int))
   AND ($1::uuid IS NULL OR n.cluster_id = $1::uuid)
 GROUP BY g.id, n.id
HAVING count(*) FILTER (WHERE m.temperature_max >= $3::real) > 0`;

const UNREACHABLE_SQL = `
SELECT n.id AS node_id, n.hostname, n.cluster_id, n.status, n.status_before_offline,
       extract(epoch FROM now() - COALESCE(n.last_heartbeat_at, n.created_at))::float8 AS silent_s, n.last_heartbeat_at
  FROM nodes n
 WHERE COALESCE(n.last_heartbeat_at, n.created_at) < now() - make_interval(secs => $2::int)
   AND ($1::uuid IS NULL OR n.cluster_id = $1::uuid)`;

const XID_SQL = `
SELECT g.id AS gpu_id, g.index AS gpu_index, g.uuid AS gpu_uuid, n.id AS node_id, n.hostname, n.cluster_id,
       g.unhealthy_reason, g.last_xid_at, g.allocated_job_id
  FROM gpus g JOIN nodes n ON n.id = g.node_id
 WHERE g.status = 'unhealthy' AND g.unhealthy_reason LIKE 'fatal_xid:%'
   AND ($1::uuid IS NULL OR n.cluster_id = $1::uuid)`;

/** Endpoints serving (not provisioning or stopped) with SLA targets, their SLA over the rule's window. */
async function slaBreachFacts(clusterId: string | null, windowS: number): Promise<SlaFacts[]> {
  const { rows } = await pool().query<{ id: string; name: string; tenant_id: string; cluster_id: string | null; status: string; sla_p95_ms: number | null; sla_availability_pct: number | null }>(
    `SELECT e.id, e.name, e.tenant_id, e.cluster_id, e.status, e.sla_p95_ms, e.sla_availability_pct FROM endpoints e
      WHERE e.deleted_at IS NULL AND e.status NOT IN ('provisioning', 'stopped') AND (e.sla_p95_ms IS NOT NULL OR e.sla_availability_pct IS NOT NULL)
        AND ($1::uuid IS NULL OR e.cluster_id = $1::uuid
             OR EXISTS (SELECT 1 FROM endpoint_replicas r JOIN nodes n ON n.id = r.node_id WHERE r.endpoint_id = e.id AND r.status <> 'stopped' AND n.cluster_id = $1::uuid))`,
    [clusterId],
  );
  if (rows.length === 0) return [];
  const now = Date.now();
  const from = new Date(now - windowS * 1000);
  const facts = await slaFacts(rows.map((r) => r.id), from, new Date(now));
  return rows.map((e) => {
    const sla = computeSla({ from: from.getTime(), to: now, now, ...facts.get(e.id)!, targets: { p95Ms: e.sla_p95_ms, availabilityPct: e.sla_availability_pct } });
    return {
      endpoint_id: e.id,
      endpoint_name: e.name,
      tenant_id: e.tenant_id,
      cluster_id: e.cluster_id,
      status: e.status,
      minutes_expected: sla.minutes_expected,
      minutes_down: sla.minutes_down,
      minutes_no_data: sla.minutes_no_data,
      availability_pct: sla.availability_pct,
      availability_target: e.sla_availability_pct,
      p95_compliance_pct: sla.p95_compliance_pct,
      p95_target_ms: e.sla_p95_ms,
      p95_worst_ms: sla.p95_worst_ms,
      error_budget_remaining_pct: sla.error_budget?.remaining_pct ?? null,
    };
  });
}

export async function gatherRuleFacts(rule: RuleForEvaluation & { cluster_id: string | null }): Promise<RuleFacts> {
  // $1 is always the cluster; each query takes only the parameters it uses after it
  const q = async <T>(sql: string, params: unknown[]) => (await pool().query({ name: `alert_facts_${rule.rule_type}`, text: sql, values: [rule.cluster_id, ...params] })).rows as T[];
  switch (rule.rule_type) {
    case "idle_gpu":
      return { rule_type: "idle_gpu", rows: await q(IDLE_GPU_SQL, [rule.window_s, IDLE_UTILIZATION_PCT, Math.max(1, Math.floor((rule.window_s / 60) * 0.8))]) };
    case "idle_allocation":
      return { rule_type: "idle_allocation", rows: await q(IDLE_ALLOCATION_SQL, [rule.window_s]) };
    case "gpu_temperature":
      return { rule_type: "gpu_temperature", rows: await q(TEMPERATURE_SQL, [rule.window_s, rule.threshold]) };
    case "node_unreachable":
      return {
        rule_type: "node_unreachable",
        rows: (await q<{ last_heartbeat_at: Date | null }>(UNREACHABLE_SQL, [rule.window_s])).map((r) => ({ ...r, last_heartbeat_at: r.last_heartbeat_at?.toISOString() ?? null })) as never,
      };
    case "gpu_xid":
      return {
        rule_type: "gpu_xid",
        rows: (await q<{ last_xid_at: Date | null }>(XID_SQL, [])).map((r) => ({ ...r, last_xid_at: r.last_xid_at?.toISOString() ?? null })) as never,
      };
    case "sla_breach":
      return { rule_type: "sla_breach", rows: await slaBreachFacts(rule.cluster_id, rule.window_s) };
  }
}
