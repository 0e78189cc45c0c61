-- Pipelines: DAGs of steps, each run as a job once everything it depends on completed.

CREATE TABLE "pipelines" (
    "id"          UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id"   UUID NOT NULL,
    "name"        TEXT NOT NULL,
    "status"      TEXT NOT NULL DEFAULT 'running',
    "created_at"  TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "pipelines_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "pipelines_status_check" CHECK ("status" IN ('running', 'completed', 'failed', 'cancelled')),
    CONSTRAINT "pipelines_finished_check" CHECK (("status" = 'running') = ("finished_at" IS NULL))
);
CREATE INDEX "pipelines_tenant_id_idx" ON "pipelines"("tenant_id", "created_at");
ALTER TABLE "pipelines" ADD CONSTRAINT "pipelines_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "pipeline_steps" (
    "id"          UUID NOT NULL DEFAULT gen_random_uuid(),
    "pipeline_id" UUID NOT NULL,
    "name"        TEXT NOT NULL,
    "position"    INTEGER NOT NULL,
    "depends_on"  TEXT[] NOT NULL DEFAULT '{}',
    "gpu_count"   INTEGER NOT NULL,
    "gpu_type"    TEXT NOT NULL,
    "priority"    INTEGER NOT NULL DEFAULT 5,
    "max_retries" INTEGER NOT NULL DEFAULT 0,
    "image"       TEXT,
    "command"     TEXT,
    "duration_s"  INTEGER,
    "repeat"      INTEGER NOT NULL DEFAULT 1,
    "iteration"   INTEGER NOT NULL DEFAULT 0,
    "status"      TEXT NOT NULL DEFAULT 'waiting',
    "job_id"      UUID,
    CONSTRAINT "pipeline_steps_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "pipeline_steps_status_check" CHECK ("status" IN ('waiting', 'running', 'completed', 'failed', 'cancelled')),
    CONSTRAINT "pipeline_steps_repeat_check" CHECK ("repeat" BETWEEN 1 AND 100 AND "iteration" BETWEEN 0 AND "repeat"),
    CONSTRAINT "pipeline_steps_running_job_check" CHECK ("status" <> 'running' OR "job_id" IS NOT NULL)
);
CREATE UNIQUE INDEX "pipeline_steps_pipeline_id_name_key" ON "pipeline_steps"("pipeline_id", "name");
ALTER TABLE "pipeline_steps" ADD CONSTRAINT "pipeline_steps_pipeline_id_fkey" FOREIGN KEY ("pipeline_id") REFERENCES "pipelines"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "pipeline_steps" ADD CONSTRAINT "pipeline_steps_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE SET NULL ON UPDATE CASCADE;

CREATE TABLE "pipeline_events" (
    "id"          BIGSERIAL NOT NULL,
    "pipeline_id" UUID NOT NULL,
    "step"        TEXT,
    "message"     TEXT NOT NULL,
    "created_at"  TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "pipeline_events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "pipeline_events_pipeline_id_idx" ON "pipeline_events"("pipeline_id", "id");
ALTER TABLE "pipeline_events" ADD CONSTRAINT "pipeline_events_pipeline_id_fkey" FOREIGN KEY ("pipeline_id") REFERENCES "pipelines"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "jobs" ADD COLUMN "pipeline_id" UUID;
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_pipeline_id_fkey" FOREIGN KEY ("pipeline_id") REFERENCES "pipelines"("id") ON DELETE SET NULL ON UPDATE CASCADE;
CREATE INDEX "jobs_pipeline_id_idx" ON "jobs"("pipeline_id") WHERE "pipeline_id" IS NOT NULL;
