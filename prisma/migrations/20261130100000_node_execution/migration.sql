-- The node execution plane: nodes say what they can run, every placement carries a fence, agent
-- keys may be bound to one node, and workloads' output is kept per placement.

-- What a node can run and what it runs on (the agent reports these at registration).
ALTER TABLE "nodes"
    ADD COLUMN "containers"        BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "container_runtime" TEXT,
    ADD COLUMN "os"                TEXT,
    ADD COLUMN "kernel"            TEXT,
    ADD COLUMN "driver_version"    TEXT,
    ADD COLUMN "cuda_version"      TEXT,
    ADD CONSTRAINT "nodes_container_runtime_check" CHECK ("container_runtime" IS NULL OR "containers");
-- the target of an agent key's (node, cluster) reference
ALTER TABLE "nodes" ADD CONSTRAINT "nodes_id_cluster_key" UNIQUE ("id", "cluster_id");

-- An agent key may be bound to one node of its cluster: it then speaks for that node only.
ALTER TABLE "api_keys" ADD COLUMN "node_id" UUID;
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_node_scope_check" CHECK ("node_id" IS NULL OR "scope" = 'agent');
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_node_cluster_fkey" FOREIGN KEY ("node_id", "cluster_id") REFERENCES "nodes"("id", "cluster_id") ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE INDEX "api_keys_node_id_idx" ON "api_keys"("node_id") WHERE "node_id" IS NOT NULL;

-- Image references as a container runtime reads them (never an option: no leading '-', no
-- spaces), for new rows; rows written before this check are left as they are.
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_image_check"
    CHECK ("image" IS NULL OR ("image" ~ '^[A-Za-z0-9][A-Za-z0-9._/:@-]*$' AND length("image") <= 500)) NOT VALID;

-- Every placement of a job (an attempt) has a fence: a token the agent that runs it must present
-- with every report about it, compared inside the statement that changes state. A report with an
-- older fence is stale: the job has moved on.
ALTER TABLE "jobs" ADD COLUMN "fence" UUID;
UPDATE "jobs" SET "fence" = gen_random_uuid() WHERE "status" = 'running';
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_running_fence_check" CHECK ("status" <> 'running' OR "fence" IS NOT NULL);

-- The history of where each attempt ran: which GPUs, from when to when. What a job's logs and GPU
-- telemetry are keyed by, long after its GPUs went to other work.
CREATE TABLE "job_placements" (
    "job_id"        UUID NOT NULL,
    "attempt"       INTEGER NOT NULL,
    "fence"         UUID NOT NULL,
    "gpu_ids"       UUID[] NOT NULL,
    "node_ids"      UUID[] NOT NULL,
    "started_at"    TIMESTAMPTZ(3) NOT NULL,
    "ended_at"      TIMESTAMPTZ(3),
    "end_status"    TEXT,
    "log_bytes"     BIGINT NOT NULL DEFAULT 0,
    "log_truncated" BOOLEAN NOT NULL DEFAULT false,
    CONSTRAINT "job_placements_pkey" PRIMARY KEY ("job_id", "attempt"),
    CONSTRAINT "job_placements_fence_key" UNIQUE ("fence"),
    CONSTRAINT "job_placements_attempt_check" CHECK ("attempt" >= 1),
    CONSTRAINT "job_placements_gpus_check" CHECK (cardinality("gpu_ids") >= 1 AND cardinality("node_ids") >= 1),
    CONSTRAINT "job_placements_ended_check" CHECK (("ended_at" IS NULL) = ("end_status" IS NULL) AND ("ended_at" IS NULL OR "ended_at" >= "started_at")),
    CONSTRAINT "job_placements_log_bytes_check" CHECK ("log_bytes" >= 0)
);
ALTER TABLE "job_placements" ADD CONSTRAINT "job_placements_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
-- a job runs in one place at a time
CREATE UNIQUE INDEX "job_placements_open_key" ON "job_placements"("job_id") WHERE "ended_at" IS NULL;
CREATE INDEX "job_placements_gpu_ids_idx" ON "job_placements" USING gin ("gpu_ids");

INSERT INTO "job_placements" ("job_id", "attempt", "fence", "gpu_ids", "node_ids", "started_at")
SELECT j."id", greatest(j."attempts", 1), j."fence", array_agg(g."id" ORDER BY g."node_id", g."index"), array_agg(DISTINCT g."node_id"), j."started_at"
  FROM "jobs" j JOIN "gpus" g ON g."allocated_job_id" = j."id" WHERE j."status" = 'running' GROUP BY j."id";

-- A placement ends when its job leaves running, whatever moved it (its agent, a cancel, a requeue
-- after node loss, suspension): one place closes them all.
CREATE FUNCTION "jobs_close_placement"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "job_placements" SET "ended_at" = greatest(now(), "started_at"), "end_status" = NEW."status"
     WHERE "job_id" = NEW."id" AND "ended_at" IS NULL;
    RETURN NULL;
END;
$$;
CREATE TRIGGER "jobs_close_placement" AFTER UPDATE OF "status" ON "jobs"
    FOR EACH ROW WHEN (OLD."status" = 'running' AND NEW."status" <> 'running') EXECUTE FUNCTION "jobs_close_placement"();

-- Endpoints may name their serving image; each replica row is one placement with its own fence.
ALTER TABLE "endpoints" ADD COLUMN "image" TEXT;
ALTER TABLE "endpoints" ADD CONSTRAINT "endpoints_image_check"
    CHECK ("image" IS NULL OR ("image" ~ '^[A-Za-z0-9][A-Za-z0-9._/:@-]*$' AND length("image") <= 500));
ALTER TABLE "endpoint_replicas"
    ADD COLUMN "fence"         UUID NOT NULL DEFAULT gen_random_uuid(),
    -- the GPUs it held, kept after they go back (its GPU telemetry is read for them, while it ran)
    ADD COLUMN "gpu_ids"       UUID[] NOT NULL DEFAULT '{}',
    ADD COLUMN "log_bytes"     BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN "log_truncated" BOOLEAN NOT NULL DEFAULT false,
    ADD CONSTRAINT "endpoint_replicas_log_bytes_check" CHECK ("log_bytes" >= 0);

UPDATE "endpoint_replicas" r SET "gpu_ids" = x."ids"
  FROM (SELECT "allocated_replica_id" AS "id", array_agg("id" ORDER BY "index") AS "ids" FROM "gpus" WHERE "allocated_replica_id" IS NOT NULL GROUP BY 1) x
 WHERE r."id" = x."id";

-- Workload output, in the agent's sequenced chunks: a job attempt's or a replica's, each chunk once.
CREATE TABLE "workload_logs" (
    "id"         BIGSERIAL NOT NULL,
    "job_id"     UUID,
    "attempt"    INTEGER,
    "replica_id" UUID,
    "seq"        INTEGER NOT NULL,
    "stream"     TEXT NOT NULL,
    "text"       TEXT NOT NULL,
    "at"         TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "workload_logs_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "workload_logs_subject_check" CHECK ((("job_id" IS NOT NULL AND "attempt" IS NOT NULL) AND "replica_id" IS NULL) OR ("job_id" IS NULL AND "attempt" IS NULL AND "replica_id" IS NOT NULL)),
    CONSTRAINT "workload_logs_seq_check" CHECK ("seq" >= 0),
    CONSTRAINT "workload_logs_stream_check" CHECK ("stream" IN ('stdout', 'stderr', 'system')),
    CONSTRAINT "workload_logs_text_check" CHECK (octet_length("text") <= 65536)
);
ALTER TABLE "workload_logs" ADD CONSTRAINT "workload_logs_placement_fkey" FOREIGN KEY ("job_id", "attempt") REFERENCES "job_placements"("job_id", "attempt") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "workload_logs" ADD CONSTRAINT "workload_logs_replica_id_fkey" FOREIGN KEY ("replica_id") REFERENCES "endpoint_replicas"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE UNIQUE INDEX "workload_logs_job_seq_key" ON "workload_logs"("job_id", "attempt", "seq") WHERE "job_id" IS NOT NULL;
CREATE UNIQUE INDEX "workload_logs_replica_seq_key" ON "workload_logs"("replica_id", "seq") WHERE "replica_id" IS NOT NULL;
CREATE INDEX "workload_logs_at_idx" ON "workload_logs" USING brin ("at");

-- New allocations: besides healthy GPUs on available nodes, work that runs a tenant's image or
-- command goes only to nodes that run containers (tenant code never runs on the host).
CREATE OR REPLACE FUNCTION "gpus_allocation_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad RECORD;
BEGIN
    SELECT n.id, (n.status <> 'available' OR nd.status <> 'available') AS unavailable INTO bad
      FROM new_rows n JOIN jobs j ON j.id = n.allocated_job_id JOIN nodes nd ON nd.id = n.node_id
     WHERE j.started_at = now()::timestamptz(3)
       AND (n.status <> 'available' OR nd.status <> 'available' OR ((j.image IS NOT NULL OR j.command IS NOT NULL) AND NOT nd.containers))
     LIMIT 1;
    IF FOUND AND bad.unavailable THEN
        RAISE EXCEPTION 'GPU % is unhealthy or its node is not available for new work', bad.id USING ERRCODE = '23514';
    ELSIF FOUND THEN
        RAISE EXCEPTION 'GPU % is on a node that does not run containers; the job runs an image or a command', bad.id USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END;
$$;

-- Replicas always run a serving container: new replica allocations go only to container nodes.
CREATE OR REPLACE FUNCTION "gpus_replica_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad RECORD;
BEGIN
    SELECT n.id, nd.containers INTO bad
      FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN nodes nd ON nd.id = n.node_id
     WHERE n.allocated_replica_id IS NOT NULL AND o.allocated_replica_id IS DISTINCT FROM n.allocated_replica_id
       AND (n.status <> 'available' OR nd.status <> 'available' OR NOT nd.containers)
     LIMIT 1;
    IF FOUND AND bad.containers THEN
        RAISE EXCEPTION 'GPU % is unhealthy or its node is not available for a new replica', bad.id USING ERRCODE = '23514';
    ELSIF FOUND THEN
        RAISE EXCEPTION 'GPU % is on a node that does not run containers; replicas run a serving container', bad.id USING ERRCODE = '23514';
    END IF;
    WITH touched AS (
        SELECT allocated_replica_id AS id FROM new_rows WHERE allocated_replica_id IS NOT NULL
        UNION SELECT allocated_replica_id FROM old_rows WHERE allocated_replica_id IS NOT NULL
    )
    SELECT r.id, r.status, r.gpu_count, c.held INTO bad
      FROM touched t JOIN endpoint_replicas r ON r.id = t.id
      CROSS JOIN LATERAL (SELECT count(*) AS held FROM gpus g WHERE g.allocated_replica_id = r.id) c
     WHERE (r.status <> 'stopped' AND c.held <> r.gpu_count) OR (r.status = 'stopped' AND c.held <> 0)
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION '% replica % would hold % GPUs (needs %)', bad.status, bad.id, bad.held, bad.gpu_count USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END;
$$;
