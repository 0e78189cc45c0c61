-- Slurm clusters join as they are (issue 31). A cluster of kind 'slurm' is run by one Slurm bridge
-- (`npm run slurm-bridge`), an agent for the whole cluster: it registers and heartbeats every Slurm
-- node through the agent routes, submits the placements GPUForge's scheduler makes as sbatch jobs on
-- exactly the chosen nodes, and reports what Slurm answers, fenced like any agent report.

-- The kind of a cluster: run by node agents ('gpu') or by a Slurm bridge ('slurm').
ALTER TABLE "clusters"
    ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'gpu',
    ADD CONSTRAINT "clusters_kind_check" CHECK ("kind" IN ('gpu', 'slurm'));

-- A GPU held by work GPUForge did not place (a job submitted to Slurm directly by one of its users):
-- what holds it, for the console. Never allocated while set, so it is never double-booked.
ALTER TABLE "gpus"
    ADD COLUMN "foreign_holder" TEXT,
    ADD CONSTRAINT "gpus_foreign_holder_check" CHECK (
        "foreign_holder" IS NULL OR ("allocated_job_id" IS NULL AND "allocated_replica_id" IS NULL AND "allocated_pod_id" IS NULL));

-- The Slurm side of a Slurm cluster, as its bridge last reported it. One bridge is active at a time
-- (bridge_id, renewed by every report): a second one started by mistake, or a standby, is refused
-- until the active one has been silent for the node lease, so no placement is ever submitted twice.
CREATE TABLE "slurm_clusters" (
    "cluster_id"         UUID PRIMARY KEY REFERENCES "clusters"("id") ON UPDATE CASCADE ON DELETE CASCADE,
    "slurm_cluster_name" TEXT NOT NULL,
    "slurm_version"      TEXT NOT NULL,
    "partitions"         JSONB NOT NULL DEFAULT '[]',
    "settings"           JSONB NOT NULL DEFAULT '{}',
    "container_mode"     TEXT NOT NULL,
    "bridge_id"          TEXT NOT NULL,
    "bridge_host"        TEXT,
    "bridge_version"     TEXT,
    "reported_at"        TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at"         TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "slurm_clusters_partitions_check" CHECK (jsonb_typeof("partitions") = 'array'),
    CONSTRAINT "slurm_clusters_settings_check" CHECK (jsonb_typeof("settings") = 'object')
);

-- A Slurm node as Slurm sees it, beside the GPUForge node it is mirrored into. mirrored_status is the
-- lifecycle status the mirror itself put the node in (Slurm's admins drained it, a maintenance
-- reservation holds it, Slurm has it down), so that only what the mirror did is undone when Slurm's
-- condition clears; a status an operator or a remediation chose is never touched by it.
CREATE TABLE "slurm_nodes" (
    "node_id"         UUID PRIMARY KEY REFERENCES "nodes"("id") ON UPDATE CASCADE ON DELETE CASCADE,
    "state"           TEXT NOT NULL,
    "reason"          TEXT,
    "reason_by"       TEXT,
    "reason_at"       TIMESTAMPTZ(3),
    "partitions"      TEXT[] NOT NULL DEFAULT '{}',
    "cpus"            INTEGER,
    "cpus_alloc"      INTEGER,
    "memory_mb"       INTEGER,
    "memory_alloc_mb" INTEGER,
    "gres"            TEXT,
    "foreign_gpus"    INTEGER NOT NULL DEFAULT 0,
    "foreign_unplaced" INTEGER NOT NULL DEFAULT 0,
    "foreign_jobs"    JSONB NOT NULL DEFAULT '[]',
    "mirrored_status" TEXT,
    "state_since"     TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at"      TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "slurm_nodes_mirrored_status_check" CHECK ("mirrored_status" IN ('draining', 'maintenance')),
    CONSTRAINT "slurm_nodes_foreign_check" CHECK ("foreign_gpus" >= 0 AND "foreign_unplaced" >= 0 AND "foreign_unplaced" <= "foreign_gpus"),
    CONSTRAINT "slurm_nodes_foreign_jobs_check" CHECK (jsonb_typeof("foreign_jobs") = 'array')
);

-- The Slurm job of each placement on a Slurm cluster: created with the placement (the trigger
-- below), filled in by the bridge's fenced reports. started_at and ended_at are Slurm's own; the
-- run is billed from them: nothing accrues before Slurm starts it, and its final segment ends where
-- Slurm says it ended (a run Slurm never started costs nothing).
CREATE TABLE "slurm_jobs" (
    "job_id"       UUID NOT NULL,
    "attempt"      INTEGER NOT NULL,
    "cluster_id"   UUID NOT NULL REFERENCES "clusters"("id") ON UPDATE CASCADE ON DELETE CASCADE,
    "slurm_job_id" TEXT,
    "account"      TEXT,
    "partition"    TEXT,
    "state"        TEXT NOT NULL DEFAULT 'PLACED',
    "reason"       TEXT,
    "nodes"        TEXT,
    "exit_code"    TEXT,
    "submitted_at" TIMESTAMPTZ(3),
    "started_at"   TIMESTAMPTZ(3),
    "ended_at"     TIMESTAMPTZ(3),
    "updated_at"   TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "slurm_jobs_pkey" PRIMARY KEY ("job_id", "attempt"),
    CONSTRAINT "slurm_jobs_placement_fkey" FOREIGN KEY ("job_id", "attempt")
        REFERENCES "job_placements"("job_id", "attempt") ON UPDATE CASCADE ON DELETE CASCADE,
    CONSTRAINT "slurm_jobs_slurm_job_id_check" CHECK ("slurm_job_id" ~ '^[0-9]{1,12}$'),
    CONSTRAINT "slurm_jobs_state_check" CHECK ("state" ~ '^[A-Z_]{2,32}$'),
    CONSTRAINT "slurm_jobs_span_check" CHECK ("ended_at" IS NULL OR "started_at" IS NULL OR "ended_at" >= "started_at")
);
CREATE INDEX "slurm_jobs_cluster_idx" ON "slurm_jobs" ("cluster_id", "slurm_job_id");

-- Every state Slurm reported for a placement's job, in order (the job page's history).
CREATE TABLE "slurm_job_events" (
    "id"           BIGSERIAL PRIMARY KEY,
    "job_id"       UUID NOT NULL,
    "attempt"      INTEGER NOT NULL,
    "state"        TEXT NOT NULL,
    "reason"       TEXT,
    "slurm_job_id" TEXT,
    "created_at"   TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "slurm_job_events_job_fkey" FOREIGN KEY ("job_id", "attempt")
        REFERENCES "slurm_jobs"("job_id", "attempt") ON UPDATE CASCADE ON DELETE CASCADE
);
CREATE INDEX "slurm_job_events_job_idx" ON "slurm_job_events" ("job_id", "attempt", "id");

-- The Slurm account each tenant's jobs are submitted under (--account), chosen once and kept, so
-- that a site with accounting enforced creates it once (sacctmgr) and its records stay together.
CREATE TABLE "slurm_accounts" (
    "tenant_id"  UUID PRIMARY KEY REFERENCES "tenants"("id") ON UPDATE CASCADE ON DELETE CASCADE,
    "account"    TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "slurm_accounts_account_key" UNIQUE ("account"),
    CONSTRAINT "slurm_accounts_account_check" CHECK ("account" ~ '^[a-z0-9][a-z0-9_-]{0,63}$')
);

-- A placement on a Slurm cluster gets its Slurm record in the statement that creates it (one
-- statement-level pass per scheduling cycle, whatever its size).
CREATE FUNCTION "job_placements_track_slurm"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO "slurm_jobs" ("job_id", "attempt", "cluster_id")
    SELECT p."job_id", p."attempt", n."cluster_id"
      FROM new_rows p JOIN "nodes" n ON n."id" = p."node_ids"[1] JOIN "clusters" c ON c."id" = n."cluster_id"
     WHERE c."kind" = 'slurm';
    RETURN NULL;
END $$;
CREATE TRIGGER "job_placements_track_slurm" AFTER INSERT ON "job_placements"
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "job_placements_track_slurm"();

-- Where a run ends for billing: now, unless Slurm ran it. A Slurm run ends where Slurm said it did
-- (never later than now, never before its start); one Slurm never started ends where it began.
CREATE FUNCTION "job_run_end"(p_job UUID, p_attempt INTEGER, p_started TIMESTAMPTZ) RETURNS TIMESTAMPTZ
LANGUAGE plpgsql STABLE AS $$
DECLARE
    s RECORD;
BEGIN
    SELECT "started_at", "ended_at" INTO s FROM "slurm_jobs" WHERE "job_id" = p_job AND "attempt" = p_attempt;
    IF NOT FOUND OR p_started IS NULL THEN RETURN clock_timestamp(); END IF;
    IF s."started_at" IS NULL THEN RETURN p_started; END IF;
    RETURN LEAST(clock_timestamp(), GREATEST(p_started, COALESCE(s."ended_at", clock_timestamp())));
END $$;

-- Redefined (last: 20261130220200_runs_end_when_they_end): the final segment ends at job_run_end,
-- which is the clock for every run but one on a Slurm cluster.
CREATE OR REPLACE FUNCTION "jobs_bill_ended_run"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "bill_usage_segment"(OLD."id", OLD."tenant_id", OLD."attempts", OLD."gpu_type", OLD."gpu_count", OLD."started_at", 'final',
                                 "job_run_end"(OLD."id", OLD."attempts", OLD."started_at"));
    RETURN NULL;
END $$;
