-- Jobs, their events, GPU allocations and the scheduler's log. The invariants the scheduler
-- promises are repeated here so that no code path, and no race, can break them.

CREATE TABLE "jobs" (
    "id"             UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id"      UUID NOT NULL,
    "name"           TEXT NOT NULL,
    "gpu_count"      INTEGER NOT NULL,
    "gpu_type"       TEXT NOT NULL,
    "priority"       INTEGER NOT NULL DEFAULT 5,
    "cluster_id"     UUID,
    "max_retries"    INTEGER NOT NULL DEFAULT 0,
    "attempts"       INTEGER NOT NULL DEFAULT 0,
    "failures"       INTEGER NOT NULL DEFAULT 0,
    "image"          TEXT,
    "command"        TEXT,
    "duration_s"     INTEGER,
    "status"         TEXT NOT NULL,
    "block_reason"   TEXT,
    "pending_reason" TEXT,
    "not_before"     TIMESTAMPTZ(3),
    "exit_code"      INTEGER,
    "error"          TEXT,
    "submitted_at"   TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at"     TIMESTAMPTZ(3),
    "finished_at"    TIMESTAMPTZ(3),
    "updated_at"     TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "jobs_status_check" CHECK ("status" IN ('queued', 'blocked', 'running', 'completed', 'failed', 'cancelled')),
    CONSTRAINT "jobs_block_reason_check" CHECK (("status" = 'blocked') = ("block_reason" IS NOT NULL) AND ("block_reason" IS NULL OR "block_reason" IN ('quota', 'billing'))),
    CONSTRAINT "jobs_gpu_count_check" CHECK ("gpu_count" BETWEEN 1 AND 4096),
    CONSTRAINT "jobs_priority_check" CHECK ("priority" BETWEEN 1 AND 10),
    CONSTRAINT "jobs_retries_check" CHECK ("max_retries" BETWEEN 0 AND 10 AND "failures" >= 0 AND "attempts" >= 0),
    CONSTRAINT "jobs_duration_check" CHECK ("duration_s" IS NULL OR "duration_s" > 0),
    CONSTRAINT "jobs_running_times_check" CHECK ("status" <> 'running' OR ("started_at" IS NOT NULL AND "finished_at" IS NULL)),
    CONSTRAINT "jobs_finished_times_check" CHECK (("status" IN ('completed', 'failed', 'cancelled')) = ("finished_at" IS NOT NULL))
);
CREATE INDEX "jobs_tenant_id_status_idx" ON "jobs"("tenant_id", "status");
-- the scheduler's queue: only waiting jobs, in its own order
CREATE INDEX "jobs_waiting_idx" ON "jobs"("priority", "submitted_at") WHERE "status" IN ('queued', 'blocked');
CREATE INDEX "jobs_running_idx" ON "jobs"("gpu_type") WHERE "status" = 'running';
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_cluster_id_fkey" FOREIGN KEY ("cluster_id") REFERENCES "clusters"("id") ON DELETE SET NULL ON UPDATE CASCADE;

CREATE TABLE "job_events" (
    "id"          BIGSERIAL NOT NULL,
    "job_id"      UUID NOT NULL,
    "from_status" TEXT,
    "to_status"   TEXT NOT NULL,
    "reason"      TEXT NOT NULL,
    "actor"       TEXT NOT NULL,
    "created_at"  TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "job_events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "job_events_job_id_idx" ON "job_events"("job_id", "id");
ALTER TABLE "job_events" ADD CONSTRAINT "job_events_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A GPU's allocation is one column: it can never hold two jobs. Its reference to the job is kept
-- by statement-level checks rather than a row-level foreign key: a scheduling cycle allocates
-- thousands of GPUs in one statement, and per-row referential checks were a sixth of its time.
-- The promises are the same: an allocation names an existing job (gpus_gang_check below), and a
-- job that holds GPUs cannot be deleted (jobs_delete_guard).
ALTER TABLE "gpus" ADD COLUMN "allocated_job_id" UUID;
CREATE INDEX "gpus_allocated_job_id_idx" ON "gpus"("allocated_job_id") WHERE "allocated_job_id" IS NOT NULL;

CREATE FUNCTION "jobs_delete_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM old_rows o JOIN gpus g ON g.allocated_job_id = o.id) THEN
        RAISE EXCEPTION 'a job that holds GPUs cannot be deleted' USING ERRCODE = '23503';
    END IF;
    RETURN NULL;
END;
$$;

-- New allocations only go to healthy, present GPUs on available nodes (a quarantined, draining,
-- offline or maintenance node takes no new work). Checked once per statement: an allocation is
-- new when its job started in this transaction (started_at = now(), at the column's millisecond
-- precision); a GPU taken from another job
-- is caught by the gang check below, since that job would be left short.
CREATE FUNCTION "gpus_allocation_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad RECORD;
BEGIN
    SELECT n.id INTO bad
      FROM new_rows n JOIN jobs j ON j.id = n.allocated_job_id JOIN nodes nd ON nd.id = n.node_id
     WHERE j.started_at = now()::timestamptz(3) AND (n.status <> 'available' OR nd.status <> 'available')
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'GPU % is unhealthy or its node is not available for new work', bad.id USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER "gpus_allocation_guard" AFTER UPDATE ON "gpus"
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "gpus_allocation_guard"();

-- Every job a statement allocated or released GPUs for exists, and holds exactly its gang if it is
-- running, and nothing otherwise. Once per statement (a scheduling cycle allocates thousands of GPUs
-- in one), so writers update a job's status before its GPUs.
CREATE FUNCTION "gpus_gang_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad RECORD;
BEGIN
    WITH touched AS (
        SELECT allocated_job_id AS job_id FROM new_rows WHERE allocated_job_id IS NOT NULL
        UNION
        SELECT allocated_job_id FROM old_rows WHERE allocated_job_id IS NOT NULL
    )
    SELECT t.job_id AS id, j.status, j.gpu_count, c.held INTO bad
      FROM touched t LEFT JOIN jobs j ON j.id = t.job_id
      CROSS JOIN LATERAL (SELECT count(*) AS held FROM gpus g WHERE g.allocated_job_id = t.job_id) c
     WHERE j.id IS NULL OR (j.status = 'running' AND c.held <> j.gpu_count) OR (j.status <> 'running' AND c.held <> 0)
     LIMIT 1;
    IF FOUND AND bad.status IS NULL THEN
        RAISE EXCEPTION 'GPU allocated to job %, which does not exist', bad.id USING ERRCODE = '23503';
    ELSIF FOUND THEN
        RAISE EXCEPTION '% job % would hold % GPUs (gang of %)', bad.status, bad.id, bad.held, bad.gpu_count USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER "gpus_gang_check" AFTER UPDATE ON "gpus"
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "gpus_gang_check"();
CREATE TRIGGER "jobs_delete_guard" AFTER DELETE ON "jobs"
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "jobs_delete_guard"();

-- A running job holds exactly gpu_count GPUs; any other job holds none. Checked at commit, so a
-- transaction may move a job and its GPUs in either order.
CREATE FUNCTION "jobs_allocation_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    held INTEGER;
    j RECORD;
BEGIN
    SELECT status, gpu_count INTO j FROM jobs WHERE id = NEW.id;
    IF NOT FOUND THEN RETURN NULL; END IF;
    SELECT count(*) INTO held FROM gpus WHERE allocated_job_id = NEW.id;
    IF j.status = 'running' AND held <> j.gpu_count THEN
        RAISE EXCEPTION 'running job % holds % GPUs, needs exactly %', NEW.id, held, j.gpu_count USING ERRCODE = '23514';
    ELSIF j.status <> 'running' AND held <> 0 THEN
        RAISE EXCEPTION '% job % still holds % GPUs', j.status, NEW.id, held USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER "jobs_allocation_check" AFTER INSERT OR UPDATE OF "status", "gpu_count" ON "jobs"
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "jobs_allocation_check"();

-- A tenant never gains GPUs beyond its quota: checked once per statement, for the tenants whose
-- allocations the statement increased (lowering a quota below what running jobs hold is allowed;
-- those jobs keep their GPUs, and updates of those GPUs keep working).
CREATE FUNCTION "gpus_quota_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    over RECORD;
BEGIN
    WITH gained AS (
        SELECT tenant_id, sum(delta) AS delta FROM (
            SELECT j.tenant_id, 1 AS delta FROM new_rows n JOIN jobs j ON j.id = n.allocated_job_id
            UNION ALL
            SELECT j.tenant_id, -1 FROM old_rows o JOIN jobs j ON j.id = o.allocated_job_id
        ) d GROUP BY tenant_id HAVING sum(delta) > 0
    )
    -- one grouped pass over allocated GPUs for all the tenants that gained
    SELECT t.id, t.gpu_quota, count(*) AS in_use INTO over
      FROM gpus x JOIN jobs j ON j.id = x.allocated_job_id JOIN tenants t ON t.id = j.tenant_id
     WHERE t.id IN (SELECT tenant_id FROM gained)
     GROUP BY t.id, t.gpu_quota HAVING count(*) > t.gpu_quota
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'tenant % would hold % GPUs, over its quota of %', over.id, over.in_use, over.gpu_quota USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER "gpus_quota_check" AFTER UPDATE ON "gpus"
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "gpus_quota_check"();

CREATE TABLE "scheduler_logs" (
    "id"          BIGSERIAL NOT NULL,
    "trigger"     TEXT NOT NULL,
    "considered"  INTEGER NOT NULL,
    "placed"      INTEGER NOT NULL,
    "blocked"     INTEGER NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "decisions"   JSONB NOT NULL DEFAULT '[]',
    "created_at"  TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "scheduler_logs_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "scheduler_logs_counts_check" CHECK ("considered" >= 0 AND "placed" >= 0 AND "blocked" >= 0 AND "placed" + "blocked" <= "considered")
);
CREATE INDEX "scheduler_logs_created_at_idx" ON "scheduler_logs"("created_at");
