import { statement } from "@/lib/db/statement";

// Jobs' raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts.

/**
 * A cached provider offer can hold the work within the tenant's burst cap (issue 30): an offer of the
 * type with enough GPUs whose price — cost × (1 + the provider's markup in basis points), half up to
 * a cent as lib/providers/pricing.ts makes it, for every GPU of the instance — is at most the cap for
 * the work's GPUs, from a provider whose instances run containers when the work needs them. One text
 * for the submit statement and for assertSatisfiable (pipelines), so both say yes to the same work.
 */
const burstOfferFits = (
  p: Record<"tenant" | "gpuType" | "gpuCount" | "containers" | "providers" | "markups" | "containerProviders", string>,
) =>
  `EXISTS (
       SELECT 1 FROM tenants bt JOIN provider_offers o ON o.gpu_type = ${p.gpuType} AND o.gpu_count >= ${p.gpuCount}
         JOIN unnest(${p.providers}::text[], ${p.markups}::int[]) AS m(provider, bp) ON m.provider = o.provider
        WHERE bt.id = ${p.tenant}::uuid AND bt.burst_enabled
          AND floor((2 * o.cost_cents_per_gpu_hour::numeric * (10000 + m.bp) + 10000) / 20000) * o.gpu_count
              <= bt.burst_max_price_cents_per_gpu_hour::numeric * ${p.gpuCount}
          AND (NOT ${p.containers}::bool OR o.provider = ANY(${p.containerProviders}::text[])))`;

/** Whether burst can hold work the fleet cannot: $1 tenant, $2 GPU type, $3 GPU count, $4 needs containers, $5–$7 the price terms. */
export const BURST_OFFER_FITS = statement("jobs.burst-offer-fits", {
  params: ["uuid", "text", "int4", "bool", "text[]", "int4[]", "text[]"],
  columns: { ok: "bool" },
  text: `SELECT ${burstOfferFits({ tenant: "$1", gpuType: "$2", gpuCount: "$3", containers: "$4", providers: "$5", markups: "$6", containerProviders: "$7" })} AS ok`,
});

/**
 * A job, its first event and (with an audit entry given) its audit entry in one statement, under
 * its tenant's row lock: the lock orders one tenant's concurrent submits, so each sees the quota
 * in use and the waiting count its predecessors left, and a submit holds it only for this one
 * statement (at 50 submits/s from one tenant, a lock held across a transaction of eight round
 * trips let them through one at a time and the rest timed out waiting). The job is written only
 * when every check passes; whether it does, the facts come back for the caller to say why not.
 *
 * $1 tenant, $2 name, $3 gpu_count, $4 gpu_type, $5 priority, $6 cluster_id, $7 max_retries,
 * $8 image, $9 command, $10 duration_s, $11 env, $12–$15 retry backoff (s, factor, max s, exit
 * codes), $16 reservation_id, $17 pipeline_id, $18 submitted_by, $19 cap on waiting jobs (null:
 * none), $20 the caller's own checks passed, $21 the event's actor, $22 audit actor kind (null: no
 * audit entry), $23 audit actor id, $24 audit details (by, name, sizes), $25 request id, $26 needs
 * containers.
 */
export const INSERT_JOB = statement("jobs.insert", {
  params: [
    "uuid",
    "text",
    "int4",
    "text",
    "int4",
    "uuid?",
    "int4",
    "text?",
    "text?",
    "int4?",
    "jsonb",
    "int4?",
    "float4?",
    "int4?",
    "int4[]",
    "uuid?",
    "uuid?",
    "uuid?",
    "int4?",
    "bool",
    "text",
    "text?",
    "text?",
    "jsonb",
    "text?",
    "bool",
    "text[]",
    "int4[]",
    "text[]",
  ],
  columns: {
    job_id: "uuid?",
    tenant_found: "bool",
    status: "text?",
    max_priority: "int4?",
    quota: "int4?",
    in_use: "int4?",
    waiting: "int4?",
    cluster_found: "bool",
    capacity: "int4",
    burst_can_hold: "bool",
  },
  // every submit runs it: planned once per connection
  prepare: true,
  text: `WITH t AS (
       SELECT t.id, t.gpu_quota, t.status, t.max_priority,
              COALESCE((SELECT in_use FROM tenant_gpus_in_use(ARRAY[t.id])), 0) AS in_use,
              (t.billing_mode = 'prepaid' AND COALESCE((SELECT sum(amount_cents) FROM ledger_entries l WHERE l.tenant_id = t.id), 0) <= 0) AS out_of_funds,
              CASE WHEN $19::int IS NULL THEN NULL
                   ELSE (SELECT count(*)::int FROM (SELECT 1 FROM jobs w WHERE w.tenant_id = t.id AND w.status IN ('queued', 'blocked') LIMIT $19::int) x) END AS waiting
         FROM tenants t WHERE t.id = $1 FOR UPDATE OF t
     ), facts AS (
       SELECT t.*, ($6::uuid IS NULL OR EXISTS (SELECT 1 FROM clusters c WHERE c.id = $6::uuid)) AS cluster_found,
              (SELECT count(*)::int FROM gpus g JOIN nodes n ON n.id = g.node_id
                WHERE g.gpu_type = $4 AND g.status <> 'missing' AND ($6::uuid IS NULL OR n.cluster_id = $6::uuid) AND (NOT $26::bool OR n.containers)) AS capacity,
              -- a tenant that bursts (issue 30): work the fleet cannot hold may still run on a provider offer
              ($6::uuid IS NULL AND ${burstOfferFits({ tenant: "$1", gpuType: "$4", gpuCount: "$3", containers: "$26", providers: "$27", markups: "$28", containerProviders: "$29" })}) AS burst_can_hold
         FROM (SELECT 1) one LEFT JOIN t ON true
     ), decided AS (
       SELECT f.*,
              CASE WHEN f.out_of_funds THEN 'billing' WHEN $16::uuid IS NULL AND f.in_use + $3 > f.gpu_quota THEN 'quota' END AS block_reason
         FROM facts f
        WHERE f.id IS NOT NULL AND f.status = 'active' AND $5 >= f.max_priority AND (f.waiting IS NULL OR f.waiting < $19::int)
          AND $3 <= f.gpu_quota AND f.cluster_found AND ($3 <= f.capacity OR f.burst_can_hold) AND $20::bool
     ), job AS (
       INSERT INTO jobs (tenant_id, name, gpu_count, gpu_type, priority, cluster_id, max_retries, image, command, duration_s, env,
                         retry_backoff_s, retry_backoff_factor, retry_backoff_max_s, retry_on_exit_codes, reservation_id, pipeline_id, submitted_by,
                         status, block_reason, pending_reason)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
              CASE WHEN d.block_reason IS NULL THEN 'queued' ELSE 'blocked' END, d.block_reason,
              CASE d.block_reason
                WHEN 'billing' THEN 'Billing: your prepaid balance is used up; add funds and it runs'
                WHEN 'quota' THEN 'Quota: your organisation holds ' || d.in_use || ' of its ' || d.gpu_quota || ' GPUs; this job needs ' || $3
                ELSE 'Waiting for the next scheduling cycle' END
         FROM decided d
       RETURNING id, status, block_reason
     ), event AS (
       INSERT INTO job_events (job_id, from_status, to_status, reason, actor)
       SELECT id, NULL, status,
              CASE block_reason WHEN 'billing' THEN 'submitted without prepaid funds' WHEN 'quota' THEN 'submitted over quota' ELSE 'submitted' END, $21
         FROM job
     ), audit AS (
       INSERT INTO audit_log (actor_kind, actor_id, tenant_id, action, target_type, target_id, details, request_id)
       SELECT $22, $23, $1, 'job.submitted', 'job', id::text, $24, $25 FROM job WHERE $22::text IS NOT NULL
     )
     SELECT (SELECT id FROM job) AS job_id, f.id IS NOT NULL AS tenant_found, f.status, f.max_priority, f.gpu_quota AS quota, f.in_use, f.waiting,
            f.cluster_found, f.capacity, f.burst_can_hold
       FROM facts f`,
});
