-- Agentic workflows: steps hand small JSON outputs to later steps, loops run a sub-sequence until a
-- condition holds, tool-call steps (http, inference) run on the control plane without GPUs,
-- pipelines can be cancelled, failed steps retried, and every transition is in the workflow log.

-- Pipelines: why they ended, their deadline, and the spec as submitted (shown and cloned in the UI).
ALTER TABLE "pipelines"
    ADD COLUMN "deadline_at" TIMESTAMPTZ(3),
    ADD COLUMN "reason"      TEXT,
    ADD COLUMN "spec"        JSONB NOT NULL DEFAULT '{}',
    ADD CONSTRAINT "pipelines_deadline_check" CHECK ("deadline_at" IS NULL OR "deadline_at" > "created_at");

-- Steps: a kind; GPU fields only for job steps, a request only for tool calls; environment
-- templates; a retry policy; a loop (this step ends the loop's body, which starts at loop_from);
-- the state of a tool call in flight (leased by one background worker, fenced per attempt).
ALTER TABLE "pipeline_steps"
    ADD COLUMN "kind"                 TEXT NOT NULL DEFAULT 'job',
    ADD COLUMN "env"                  JSONB NOT NULL DEFAULT '{}',
    ADD COLUMN "request"              JSONB,
    ADD COLUMN "timeout_s"            INTEGER,
    ADD COLUMN "declared_outputs"     TEXT[] NOT NULL DEFAULT '{}',
    ADD COLUMN "retry_backoff_s"      INTEGER NOT NULL DEFAULT 10,
    ADD COLUMN "retry_backoff_factor" REAL NOT NULL DEFAULT 2,
    ADD COLUMN "retry_backoff_max_s"  INTEGER NOT NULL DEFAULT 600,
    ADD COLUMN "retry_on"             INTEGER[] NOT NULL DEFAULT '{}',
    ADD COLUMN "loop_from"            TEXT,
    ADD COLUMN "loop_until"           TEXT,
    ADD COLUMN "loop_timeout_s"       INTEGER,
    ADD COLUMN "loop_on_exhausted"    TEXT,
    ADD COLUMN "loop_started_at"      TIMESTAMPTZ(3),
    ADD COLUMN "call_attempt"         INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN "call_fence"           UUID,
    ADD COLUMN "call_due_at"          TIMESTAMPTZ(3),
    ADD COLUMN "call_lease_until"     TIMESTAMPTZ(3),
    ADD COLUMN "error"                TEXT,
    ADD COLUMN "started_at"           TIMESTAMPTZ(3),
    ADD COLUMN "finished_at"          TIMESTAMPTZ(3);
ALTER TABLE "pipeline_steps" ALTER COLUMN "gpu_count" DROP NOT NULL, ALTER COLUMN "gpu_type" DROP NOT NULL;
ALTER TABLE "pipeline_steps" DROP CONSTRAINT "pipeline_steps_status_check",
    DROP CONSTRAINT "pipeline_steps_repeat_check",
    DROP CONSTRAINT "pipeline_steps_running_job_check";
ALTER TABLE "pipeline_steps"
    ADD CONSTRAINT "pipeline_steps_status_check" CHECK ("status" IN ('waiting', 'running', 'completed', 'failed', 'cancelled', 'skipped')),
    ADD CONSTRAINT "pipeline_steps_kind_check" CHECK ("kind" IN ('job', 'http', 'inference')),
    -- job steps hold GPUs and run a job; tool calls hold none and carry their request
    ADD CONSTRAINT "pipeline_steps_kind_fields_check" CHECK (
        ("kind" = 'job') = ("gpu_count" IS NOT NULL AND "gpu_type" IS NOT NULL)
        AND ("kind" = 'job') = ("request" IS NULL)
        AND ("kind" = 'job' OR "timeout_s" BETWEEN 1 AND 300)),
    ADD CONSTRAINT "pipeline_steps_env_check" CHECK (jsonb_typeof("env") = 'object'),
    ADD CONSTRAINT "pipeline_steps_repeat_check" CHECK ("repeat" BETWEEN 1 AND 100 AND "iteration" BETWEEN 0 AND 100),
    ADD CONSTRAINT "pipeline_steps_retry_check" CHECK ("retry_backoff_s" BETWEEN 1 AND 86400 AND "retry_backoff_factor" BETWEEN 1 AND 10 AND "retry_backoff_max_s" BETWEEN "retry_backoff_s" AND 86400),
    -- a loop has a first step and what happens when it runs out; an until-loop has a time limit
    ADD CONSTRAINT "pipeline_steps_loop_check" CHECK (
        ("loop_from" IS NULL) = ("loop_on_exhausted" IS NULL)
        AND ("loop_on_exhausted" IS NULL OR "loop_on_exhausted" IN ('fail', 'continue'))
        AND ("loop_until" IS NULL OR ("loop_from" IS NOT NULL AND "loop_timeout_s" IS NOT NULL))
        AND ("loop_timeout_s" IS NULL OR "loop_timeout_s" BETWEEN 1 AND 2592000)),
    -- a running job step has its job; a running tool call has a fenced attempt
    ADD CONSTRAINT "pipeline_steps_running_check" CHECK (
        "status" <> 'running' OR ("kind" = 'job' AND "job_id" IS NOT NULL) OR ("kind" <> 'job' AND "call_fence" IS NOT NULL AND "call_attempt" >= 1)),
    ADD CONSTRAINT "pipeline_steps_call_check" CHECK ("call_attempt" BETWEEN 0 AND 11 AND ("kind" <> 'job' OR "call_attempt" = 0));
-- the tool-call worker's queue: running calls, by when they are due
CREATE INDEX "pipeline_steps_calls_due_idx" ON "pipeline_steps"("call_due_at") WHERE "status" = 'running' AND "kind" <> 'job';
CREATE INDEX "pipeline_steps_job_id_idx" ON "pipeline_steps"("job_id") WHERE "job_id" IS NOT NULL;

-- Each step's output, per loop iteration: what later steps' expressions read.
CREATE TABLE "pipeline_step_outputs" (
    "pipeline_id" UUID NOT NULL,
    "step"        TEXT NOT NULL,
    "iteration"   INTEGER NOT NULL,
    "output"      JSONB NOT NULL,
    "bytes"       INTEGER NOT NULL,
    "source"      TEXT NOT NULL,
    "job_id"      UUID,
    "attempt"     INTEGER,
    "created_at"  TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "pipeline_step_outputs_pkey" PRIMARY KEY ("pipeline_id", "step", "iteration"),
    CONSTRAINT "pipeline_step_outputs_iteration_check" CHECK ("iteration" BETWEEN 0 AND 100),
    CONSTRAINT "pipeline_step_outputs_bytes_check" CHECK ("bytes" BETWEEN 0 AND 1048576),
    CONSTRAINT "pipeline_step_outputs_source_check" CHECK ("source" IN ('job', 'http', 'inference') AND ("source" = 'job') = ("job_id" IS NOT NULL AND "attempt" IS NOT NULL))
);
ALTER TABLE "pipeline_step_outputs" ADD CONSTRAINT "pipeline_step_outputs_step_fkey" FOREIGN KEY ("pipeline_id", "step") REFERENCES "pipeline_steps"("pipeline_id", "name") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "pipeline_step_outputs" ADD CONSTRAINT "pipeline_step_outputs_placement_fkey" FOREIGN KEY ("job_id", "attempt") REFERENCES "job_placements"("job_id", "attempt") ON DELETE CASCADE ON UPDATE CASCADE;

-- The workflow log: what kind of entry, in which loop iteration, with structured details
-- (tool-call status and duration, output sizes, retry attempts).
ALTER TABLE "pipeline_events"
    ADD COLUMN "kind"      TEXT NOT NULL DEFAULT 'transition',
    ADD COLUMN "iteration" INTEGER,
    ADD COLUMN "details"   JSONB,
    ADD CONSTRAINT "pipeline_events_kind_check" CHECK ("kind" IN ('submitted', 'transition', 'iteration', 'output', 'tool_call', 'retry', 'control', 'deadline'));

-- Jobs: an environment of the tenant's (what pipeline steps resolve their env templates into) and
-- a retry policy (backoff, which exit codes retry).
ALTER TABLE "jobs"
    ADD COLUMN "env"                  JSONB NOT NULL DEFAULT '{}',
    ADD COLUMN "retry_backoff_s"      INTEGER,
    ADD COLUMN "retry_backoff_factor" REAL,
    ADD COLUMN "retry_backoff_max_s"  INTEGER,
    ADD COLUMN "retry_on_exit_codes"  INTEGER[] NOT NULL DEFAULT '{}',
    ADD CONSTRAINT "jobs_env_check" CHECK (jsonb_typeof("env") = 'object' AND octet_length("env"::text) <= 65536),
    ADD CONSTRAINT "jobs_retry_policy_check" CHECK (
        ("retry_backoff_s" IS NULL) = ("retry_backoff_factor" IS NULL) AND ("retry_backoff_s" IS NULL) = ("retry_backoff_max_s" IS NULL)
        AND ("retry_backoff_s" IS NULL OR ("retry_backoff_s" BETWEEN 1 AND 86400 AND "retry_backoff_factor" BETWEEN 1 AND 10 AND "retry_backoff_max_s" BETWEEN "retry_backoff_s" AND 86400)));

-- A placement's outputs: posted while it runs (by its agent or its own workload), fenced.
ALTER TABLE "job_placements"
    ADD COLUMN "outputs"       JSONB,
    ADD COLUMN "outputs_bytes" INTEGER,
    ADD COLUMN "outputs_at"    TIMESTAMPTZ(3),
    ADD CONSTRAINT "job_placements_outputs_check" CHECK (("outputs" IS NULL) = ("outputs_bytes" IS NULL) AND ("outputs" IS NULL) = ("outputs_at" IS NULL) AND ("outputs_bytes" IS NULL OR "outputs_bytes" BETWEEN 0 AND 1048576));
-- the statement that writes outputs also names the open placement; this repeats it: once a
-- placement ended, its outputs are what the pipeline read and can no longer change
CREATE FUNCTION "job_placements_outputs_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD."ended_at" IS NOT NULL THEN
        RAISE EXCEPTION 'placement % of job % has ended; its outputs are final', OLD."attempt", OLD."job_id" USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER "job_placements_outputs_guard" BEFORE UPDATE OF "outputs" ON "job_placements"
    FOR EACH ROW WHEN (OLD."outputs" IS DISTINCT FROM NEW."outputs") EXECUTE FUNCTION "job_placements_outputs_guard"();

-- Tenants' secrets for tool calls, referenced by name, stored encrypted (AES-256-GCM under a key
-- derived from the app's secret), never returned.
CREATE TABLE "tenant_secrets" (
    "id"         UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id"  UUID NOT NULL,
    "name"       TEXT NOT NULL,
    "ciphertext" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "tenant_secrets_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "tenant_secrets_name_check" CHECK ("name" ~ '^[A-Z][A-Z0-9_]{0,63}$')
);
CREATE UNIQUE INDEX "tenant_secrets_tenant_id_name_key" ON "tenant_secrets"("tenant_id", "name");
ALTER TABLE "tenant_secrets" ADD CONSTRAINT "tenant_secrets_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Where a replica serves requests, as its serving side reports it: inference steps call it until
-- the inference gateway routes tenant traffic.
ALTER TABLE "endpoint_replicas" ADD COLUMN "serving_url" TEXT,
    ADD CONSTRAINT "endpoint_replicas_serving_url_check" CHECK ("serving_url" IS NULL OR ("serving_url" ~ '^https?://' AND length("serving_url") <= 500));
