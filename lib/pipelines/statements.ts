import { statement } from "@/lib/db/statement";

// Pipelines' raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts.

/** Each step's latest output (by iteration) of the pipeline $1. */
export const LATEST_OUTPUTS = statement("pipelines.latest-outputs", {
  params: ["uuid"],
  columns: { step: "text", output: "jsonb" },
  text: `
    SELECT DISTINCT ON (step) step, output FROM pipeline_step_outputs WHERE pipeline_id = $1::uuid ORDER BY step, iteration DESC`,
});

/** A job step's ($2, iteration $3, of the pipeline $1) output: what its job $4 posted in its attempt $5, if any. */
export const CAPTURE_JOB_OUTPUT = statement("pipelines.capture-job-output", {
  params: ["uuid", "text", "int4", "uuid", "int4"],
  columns: { bytes: "int4" },
  text: `
      INSERT INTO pipeline_step_outputs (pipeline_id, step, iteration, output, bytes, source, job_id, attempt)
      SELECT $1::uuid, $2, $3, jp.outputs, jp.outputs_bytes, 'job', jp.job_id, jp.attempt
        FROM job_placements jp WHERE jp.job_id = $4::uuid AND jp.attempt = $5 AND jp.outputs IS NOT NULL
      ON CONFLICT (pipeline_id, step, iteration) DO UPDATE SET output = EXCLUDED.output, bytes = EXCLUDED.bytes, source = EXCLUDED.source, job_id = EXCLUDED.job_id, attempt = EXCLUDED.attempt, created_at = now()
      RETURNING bytes`,
});

/** The pipeline $1 to advance, locked, with its tenant's state. */
export const LOCK_PIPELINE_TO_ADVANCE = statement("pipelines.lock-to-advance", {
  params: ["uuid"],
  columns: { tenant_id: "uuid", status: "text", name: "text", tenant_status: "text", max_priority: "int4" },
  text: `
    SELECT p.tenant_id, p.status, p.name, t.status AS tenant_status, t.max_priority
      FROM pipelines p JOIN tenants t ON t.id = p.tenant_id WHERE p.id = $1::uuid FOR UPDATE OF p`,
});

/** Locks the pipeline $1. */
/** Locks the pipeline $1 if the caller may see it: $2 is the caller's tenant, null for operators (lib/auth/tenant-scope). */
export const LOCK_PIPELINE = statement("pipelines.lock", {
  params: ["uuid", "uuid?"],
  columns: { tenant_id: "uuid", status: "text", name: "text" },
  text: `SELECT tenant_id, status, name FROM pipelines WHERE id = $1::uuid AND ($2::uuid IS NULL OR tenant_id = $2::uuid) FOR UPDATE`,
});

/** Locks the pipeline $1 if its deadline is at or before $2. */
export const LOCK_PIPELINE_PAST_DEADLINE = statement("pipelines.lock-past-deadline", {
  params: ["uuid", "timestamptz"],
  columns: { status: "text" },
  text: `SELECT status FROM pipelines WHERE id = $1::uuid AND deadline_at <= $2 FOR UPDATE`,
});

/** The submitting tenant $1, locked, with what its steps are checked against. */
export const LOCK_PIPELINE_TENANT = statement("pipelines.lock-tenant", {
  params: ["uuid"],
  columns: { gpuQuota: "int4", maxPriority: "int4" },
  text: `
      SELECT gpu_quota AS "gpuQuota", max_priority AS "maxPriority" FROM tenants WHERE id = $1::uuid FOR UPDATE`,
});

/** The jobs $1 of a stopping pipeline, locked in id order. */
export const LOCK_STEP_JOBS = statement("pipelines.lock-step-jobs", {
  params: ["uuid[]"],
  columns: { id: "uuid", status: "text" },
  text: `SELECT id, status FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
});

/** The tenant $1's endpoint named $2, unless deleted. */
export const ENDPOINT_BY_NAME = statement("pipelines.endpoint-by-name", {
  params: ["uuid", "text"],
  columns: { id: "uuid" },
  text: `SELECT id FROM endpoints WHERE tenant_id = $1 AND name = $2 AND deleted_at IS NULL`,
});

/**
 * Claims up to $1 due tool calls, fairly across tenants: each tenant's oldest first, round-robin
 * (every tenant's first call, then every tenant's second, …), and no tenant past $2 calls in flight
 * across every worker — one tenant's backlog or slow server cannot hold up another's calls. Each
 * is leased for its timeout and half a minute (parallel workers skip each other's); suspended
 * tenants' calls wait. Run under the tool-call claim lock (lib/db/locks.ts), so two workers
 * counting a tenant's calls in flight at once cannot both fill its room.
 */
export const CLAIM_DUE_CALLS = statement("pipelines.claim-due-calls", {
  params: ["int8", "int4"],
  columns: {
    id: "uuid",
    pipeline_id: "uuid",
    pipeline_name: "text",
    tenant_id: "uuid",
    started_by_user_id: "uuid?",
    started_by_service_account_id: "uuid?",
    name: "text",
    kind: "text",
    request: "jsonb",
    timeout_s: "int4",
    call_attempt: "int4",
    call_fence: "text",
    iteration: "int4",
    max_retries: "int4",
    retry_backoff_s: "int4",
    retry_backoff_factor: "float4",
    retry_backoff_max_s: "int4",
    retry_on: "int4[]",
  },
  text: `WITH waiting AS (
       SELECT s.id, p.tenant_id, s.call_due_at FROM pipeline_steps s JOIN pipelines p ON p.id = s.pipeline_id JOIN tenants t ON t.id = p.tenant_id
        WHERE s.status = 'running' AND s.kind <> 'job' AND s.call_due_at <= now()
          AND (s.call_lease_until IS NULL OR s.call_lease_until < now()) AND p.status = 'running' AND t.status = 'active'
     ), room AS (
       SELECT w.tenant_id, $2::int4 - (SELECT count(*) FROM pipeline_steps s JOIN pipelines p ON p.id = s.pipeline_id
                                  WHERE p.tenant_id = w.tenant_id AND s.status = 'running' AND s.kind <> 'job' AND s.call_lease_until >= now()) AS room
         FROM (SELECT DISTINCT tenant_id FROM waiting) w
     ), ranked AS (
       SELECT w.id, w.call_due_at, row_number() OVER (PARTITION BY w.tenant_id ORDER BY w.call_due_at, w.id) AS turn, r.room
         FROM waiting w JOIN room r ON r.tenant_id = w.tenant_id
     ), due AS (
       SELECT s.id FROM pipeline_steps s JOIN ranked k ON k.id = s.id
        WHERE k.turn <= k.room
        ORDER BY k.turn, k.call_due_at LIMIT $1 FOR UPDATE OF s SKIP LOCKED)
     UPDATE pipeline_steps s SET call_lease_until = now() + make_interval(secs => s.timeout_s + 30)
       FROM due, pipelines p WHERE s.id = due.id AND p.id = s.pipeline_id
     RETURNING s.id, s.pipeline_id, p.name AS pipeline_name, p.tenant_id, p.started_by_user_id, p.started_by_service_account_id, s.name, s.kind,
               s.request, s.timeout_s, s.call_attempt, s.call_fence::text AS call_fence, s.iteration, s.max_retries, s.retry_backoff_s,
               s.retry_backoff_factor, s.retry_backoff_max_s, s.retry_on`,
});

/** The rights now of whom a pipeline acts for (a person or a service account): its role, and whether it is disabled. */
export const PIPELINE_STARTER_RIGHTS = statement("pipelines.starter-rights", {
  params: ["uuid?", "uuid?"],
  columns: { role: "text", tenant_id: "uuid?", disabled: "bool" },
  text: `SELECT role, tenant_id, disabled FROM key_owner($1::uuid, $2::uuid)`,
});

/** Of the tenants $1, those no longer active (their calls in flight are aborted). */
export const INACTIVE_TENANTS = statement("pipelines.inactive-tenants", {
  params: ["uuid[]"],
  columns: { id: "text" },
  text: `SELECT id::text FROM tenants WHERE id = ANY($1::uuid[]) AND status <> 'active'`,
});

/** Locks the pipeline $1 for a call's result. */
export const LOCK_PIPELINE_FOR_RESULT = statement("pipelines.lock-for-result", {
  params: ["uuid"],
  columns: { "?column?": "int4" },
  text: `SELECT 1 FROM pipelines WHERE id = $1::uuid FOR UPDATE`,
});

/** Whether the step $2 still waits for the call of the fence $1, locked. */
export const LOCK_CALL_STEP = statement("pipelines.lock-call-step", {
  params: ["uuid", "uuid"],
  columns: { ok: "bool" },
  text: `
      SELECT (status = 'running' AND call_fence = $1::uuid) AS ok FROM pipeline_steps WHERE id = $2::uuid FOR UPDATE`,
});

/** A tool call's output ($4, JSON of $5 bytes, from a $6 call) for the step $2, iteration $3, of the pipeline $1. */
export const RECORD_CALL_OUTPUT = statement("pipelines.record-call-output", {
  params: ["uuid", "text", "int4", "jsonb", "int4", "text"],
  columns: {},
  text: `
        INSERT INTO pipeline_step_outputs (pipeline_id, step, iteration, output, bytes, source)
        VALUES ($1::uuid, $2, $3, $4::jsonb, $5, $6)
        ON CONFLICT (pipeline_id, step, iteration) DO UPDATE SET output = EXCLUDED.output, bytes = EXCLUDED.bytes, source = EXCLUDED.source, job_id = NULL, attempt = NULL, created_at = now()`,
});

/**
 * The tool calls in flight for the tenants $1 ($2: why) are taken back: a new fence, so whatever a
 * worker gets back from them changes nothing, and no lease, so they run again (a fresh call, no
 * retry spent) once the tenant is active, with an entry in each pipeline's log.
 */
export const INTERRUPT_TENANT_CALLS = statement("pipelines.interrupt-tenant-calls", {
  params: ["uuid[]", "text"],
  columns: { id: "text" },
  text: `WITH taken AS (
       UPDATE pipeline_steps s SET call_fence = gen_random_uuid(), call_lease_until = NULL
         FROM pipelines p
        WHERE p.id = s.pipeline_id AND p.tenant_id = ANY($1::uuid[]) AND s.status = 'running' AND s.kind <> 'job' AND s.call_lease_until IS NOT NULL
       RETURNING s.id, s.pipeline_id, s.name, s.iteration, s.call_attempt
     ), logged AS (
       INSERT INTO pipeline_events (pipeline_id, step, kind, iteration, message, details)
       SELECT t.pipeline_id, t.name, 'tool_call', t.iteration, 'call attempt ' || t.call_attempt || ' interrupted: ' || $2 || '; it runs again once the organisation is active',
              jsonb_build_object('attempt', t.call_attempt, 'interrupted', true)
         FROM taken t
     )
     SELECT id::text FROM taken`,
});
