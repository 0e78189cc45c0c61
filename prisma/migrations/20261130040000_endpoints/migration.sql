-- Inference endpoints: a tenant's model served by replicas, each replica holding GPUs through the
-- same allocator and quota as jobs. A GPU is held by a job or by a replica, never both (a CHECK);
-- a live replica holds exactly its GPUs and a stopped one none; replica GPU time is billed through
-- usage_events like a job's run, at most once.

CREATE TABLE "endpoints" (
    "id"                   UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id"            UUID NOT NULL,
    "name"                 TEXT NOT NULL,
    "model"                TEXT NOT NULL,
    "gpu_type"             TEXT NOT NULL,
    "gpus_per_replica"     INTEGER NOT NULL,
    "cluster_id"           UUID,
    "desired_replicas"     INTEGER NOT NULL,
    "min_replicas"         INTEGER NOT NULL,
    "max_replicas"         INTEGER NOT NULL,
    -- the replica count before the last change of desired_replicas, until the endpoint converges
    "scaling_from"         INTEGER,
    "sla_p95_ms"           INTEGER,
    "sla_availability_pct" DOUBLE PRECISION,
    "autoscale_metric"     TEXT NOT NULL DEFAULT 'none',
    "autoscale_target"     DOUBLE PRECISION,
    "cooldown_s"           INTEGER NOT NULL DEFAULT 300,
    "status"               TEXT NOT NULL DEFAULT 'provisioning',
    "status_reason"        TEXT,
    "stop_requested"       BOOLEAN NOT NULL DEFAULT false,
    "ever_ready"           BOOLEAN NOT NULL DEFAULT false,
    "without_ready_since"  TIMESTAMPTZ(3),
    "last_scaled_at"       TIMESTAMPTZ(3),
    "created_by"           TEXT NOT NULL,
    "created_at"           TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at"           TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted_at"           TIMESTAMPTZ(3),
    CONSTRAINT "endpoints_pkey" PRIMARY KEY ("id"),
    -- the target of replicas' (endpoint, tenant) reference: a replica is always its endpoint's tenant's
    CONSTRAINT "endpoints_id_tenant_key" UNIQUE ("id", "tenant_id"),
    CONSTRAINT "endpoints_name_check" CHECK (length("name") BETWEEN 1 AND 100),
    CONSTRAINT "endpoints_model_check" CHECK (length("model") BETWEEN 1 AND 300),
    CONSTRAINT "endpoints_gpus_check" CHECK ("gpus_per_replica" BETWEEN 1 AND 64),
    CONSTRAINT "endpoints_replicas_check" CHECK ("min_replicas" >= 1 AND "min_replicas" <= "desired_replicas" AND "desired_replicas" <= "max_replicas" AND "max_replicas" <= 64),
    CONSTRAINT "endpoints_sla_check" CHECK (("sla_p95_ms" IS NULL OR "sla_p95_ms" BETWEEN 1 AND 600000)
        AND ("sla_availability_pct" IS NULL OR ("sla_availability_pct" >= 50 AND "sla_availability_pct" < 100))),
    CONSTRAINT "endpoints_autoscale_check" CHECK ("autoscale_metric" IN ('none', 'requests_per_replica', 'p95_ms')
        AND (("autoscale_metric" = 'none') = ("autoscale_target" IS NULL)) AND ("autoscale_target" IS NULL OR "autoscale_target" > 0)),
    CONSTRAINT "endpoints_cooldown_check" CHECK ("cooldown_s" BETWEEN 30 AND 86400),
    CONSTRAINT "endpoints_status_check" CHECK ("status" IN ('provisioning', 'ready', 'degraded', 'scaling', 'stopped', 'failed')),
    -- a deleted endpoint is stopped for good
    CONSTRAINT "endpoints_deleted_check" CHECK ("deleted_at" IS NULL OR ("status" = 'stopped' AND "stop_requested"))
);
CREATE UNIQUE INDEX "endpoints_tenant_name_key" ON "endpoints"("tenant_id", "name") WHERE "deleted_at" IS NULL;
CREATE INDEX "endpoints_status_idx" ON "endpoints"("status");
ALTER TABLE "endpoints" ADD CONSTRAINT "endpoints_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "endpoints" ADD CONSTRAINT "endpoints_cluster_id_fkey" FOREIGN KEY ("cluster_id") REFERENCES "clusters"("id") ON DELETE SET NULL ON UPDATE CASCADE;

CREATE TABLE "endpoint_events" (
    "id"          BIGSERIAL NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "from_status" TEXT,
    "to_status"   TEXT NOT NULL,
    "reason"      TEXT NOT NULL,
    "actor"       TEXT NOT NULL,
    "created_at"  TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "endpoint_events_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "endpoint_events_change_check" CHECK ("from_status" IS DISTINCT FROM "to_status")
);
CREATE INDEX "endpoint_events_endpoint_id_idx" ON "endpoint_events"("endpoint_id", "id");
ALTER TABLE "endpoint_events" ADD CONSTRAINT "endpoint_events_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every autoscaling decision that changed (or was prevented from changing) the replica count.
CREATE TABLE "endpoint_scaling_decisions" (
    "id"            BIGSERIAL NOT NULL,
    "endpoint_id"   UUID NOT NULL,
    "from_replicas" INTEGER NOT NULL,
    "to_replicas"   INTEGER NOT NULL,
    "metric"        TEXT NOT NULL,
    "observed"      DOUBLE PRECISION,
    "target"        DOUBLE PRECISION,
    "outcome"       TEXT NOT NULL,
    "reason"        TEXT NOT NULL,
    "created_at"    TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "endpoint_scaling_decisions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "endpoint_scaling_decisions_outcome_check" CHECK ("outcome" IN ('scale_up', 'scale_down', 'held')),
    CONSTRAINT "endpoint_scaling_decisions_change_check" CHECK (("outcome" = 'held') = ("from_replicas" = "to_replicas"))
);
CREATE INDEX "endpoint_scaling_decisions_endpoint_id_idx" ON "endpoint_scaling_decisions"("endpoint_id", "id");
ALTER TABLE "endpoint_scaling_decisions" ADD CONSTRAINT "endpoint_scaling_decisions_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "endpoint_replicas" (
    "id"              UUID NOT NULL DEFAULT gen_random_uuid(),
    "endpoint_id"     UUID NOT NULL,
    "tenant_id"       UUID NOT NULL,
    "node_id"         UUID,
    "gpu_type"        TEXT NOT NULL,
    "gpu_count"       INTEGER NOT NULL,
    "status"          TEXT NOT NULL DEFAULT 'starting',
    "health_reason"   TEXT,
    "started_at"      TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ready_at"        TIMESTAMPTZ(3),
    "last_sample_at"  TIMESTAMPTZ(3),
    "unhealthy_since" TIMESTAMPTZ(3),
    "stopped_at"      TIMESTAMPTZ(3),
    "stop_reason"     TEXT,
    CONSTRAINT "endpoint_replicas_pkey" PRIMARY KEY ("id"),
    -- the target of usage events' (replica, endpoint) reference
    CONSTRAINT "endpoint_replicas_id_endpoint_key" UNIQUE ("id", "endpoint_id"),
    CONSTRAINT "endpoint_replicas_status_check" CHECK ("status" IN ('starting', 'ready', 'unhealthy', 'stopped')),
    CONSTRAINT "endpoint_replicas_stopped_check" CHECK (("status" = 'stopped') = ("stopped_at" IS NOT NULL) AND ("status" = 'stopped') = ("stop_reason" IS NOT NULL)),
    CONSTRAINT "endpoint_replicas_unhealthy_check" CHECK (("status" = 'unhealthy') = ("unhealthy_since" IS NOT NULL) AND ("status" = 'unhealthy') = ("health_reason" IS NOT NULL)),
    CONSTRAINT "endpoint_replicas_node_check" CHECK ("status" = 'stopped' OR "node_id" IS NOT NULL),
    CONSTRAINT "endpoint_replicas_gpu_count_check" CHECK ("gpu_count" BETWEEN 1 AND 64)
);
CREATE INDEX "endpoint_replicas_endpoint_id_idx" ON "endpoint_replicas"("endpoint_id", "started_at");
CREATE INDEX "endpoint_replicas_live_idx" ON "endpoint_replicas"("node_id") WHERE "status" <> 'stopped';
-- tenant_id is kept on the replica for the quota checks' joins; this reference keeps it its endpoint's
ALTER TABLE "endpoint_replicas" ADD CONSTRAINT "endpoint_replicas_endpoint_tenant_fkey" FOREIGN KEY ("endpoint_id", "tenant_id") REFERENCES "endpoints"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "endpoint_replicas" ADD CONSTRAINT "endpoint_replicas_node_id_fkey" FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- A GPU is held by a job or by a replica, never both.
ALTER TABLE "gpus" ADD COLUMN "allocated_replica_id" UUID;
ALTER TABLE "gpus" ADD CONSTRAINT "gpus_one_holder_check" CHECK ("allocated_job_id" IS NULL OR "allocated_replica_id" IS NULL);
ALTER TABLE "gpus" ADD CONSTRAINT "gpus_allocated_replica_id_fkey" FOREIGN KEY ("allocated_replica_id") REFERENCES "endpoint_replicas"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE INDEX "gpus_allocated_replica_id_idx" ON "gpus"("allocated_replica_id") WHERE "allocated_replica_id" IS NOT NULL;

-- GPUs each tenant holds, through jobs and replicas alike: the one definition of "in use" that
-- quotas, the scheduler and the tenant pages share.
CREATE FUNCTION "tenant_gpus_in_use"(p_tenants UUID[]) RETURNS TABLE ("tenant_id" UUID, "in_use" INTEGER) LANGUAGE sql STABLE AS $$
    SELECT x.tenant_id, count(*)::int FROM (
        SELECT j.tenant_id FROM gpus g JOIN jobs j ON j.id = g.allocated_job_id WHERE j.tenant_id = ANY(p_tenants)
        UNION ALL
        SELECT r.tenant_id FROM gpus g JOIN endpoint_replicas r ON r.id = g.allocated_replica_id WHERE r.tenant_id = ANY(p_tenants)
    ) x GROUP BY x.tenant_id
$$;

-- A tenant never gains GPUs beyond its quota, counting jobs and replicas together.
CREATE OR REPLACE FUNCTION "gpus_quota_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    over RECORD;
    gainers UUID[];
BEGIN
    SELECT array_agg(tenant_id) INTO gainers FROM (
        SELECT tenant_id FROM (
            SELECT j.tenant_id, 1 AS delta FROM new_rows n JOIN jobs j ON j.id = n.allocated_job_id
            UNION ALL SELECT r.tenant_id, 1 FROM new_rows n JOIN endpoint_replicas r ON r.id = n.allocated_replica_id
            UNION ALL SELECT j.tenant_id, -1 FROM old_rows o JOIN jobs j ON j.id = o.allocated_job_id
            UNION ALL SELECT r.tenant_id, -1 FROM old_rows o JOIN endpoint_replicas r ON r.id = o.allocated_replica_id
        ) d GROUP BY tenant_id HAVING sum(delta) > 0
    ) g;
    IF gainers IS NULL THEN RETURN NULL; END IF;
    SELECT t.id, t.gpu_quota, u.in_use INTO over
      FROM tenant_gpus_in_use(gainers) u JOIN tenants t ON t.id = u.tenant_id
     WHERE u.in_use > t.gpu_quota LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'tenant % would hold % GPUs, over its quota of %', over.id, over.in_use, over.gpu_quota USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END;
$$;

-- Replica allocations: new ones go only to healthy GPUs on available nodes, and every replica a
-- statement touched holds exactly its GPUs while live and none once stopped.
CREATE FUNCTION "gpus_replica_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad RECORD;
BEGIN
    SELECT n.id INTO bad
      FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN nodes nd ON nd.id = n.node_id
     WHERE n.allocated_replica_id IS NOT NULL AND o.allocated_replica_id IS DISTINCT FROM n.allocated_replica_id
       AND (n.status <> 'available' OR nd.status <> 'available')
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'GPU % is unhealthy or its node is not available for a new replica', bad.id USING ERRCODE = '23514';
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
CREATE TRIGGER "gpus_replica_check" AFTER UPDATE ON "gpus"
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "gpus_replica_check"();

-- The same promise from the replica's side, at commit: a live replica holds exactly gpu_count GPUs.
CREATE FUNCTION "endpoint_replicas_allocation_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r RECORD;
    held INTEGER;
BEGIN
    SELECT status, gpu_count INTO r FROM endpoint_replicas WHERE id = NEW.id;
    IF NOT FOUND THEN RETURN NULL; END IF;
    SELECT count(*) INTO held FROM gpus WHERE allocated_replica_id = NEW.id;
    IF (r.status <> 'stopped' AND held <> r.gpu_count) OR (r.status = 'stopped' AND held <> 0) THEN
        RAISE EXCEPTION '% replica % holds % GPUs, needs %', r.status, NEW.id, held, CASE WHEN r.status = 'stopped' THEN 0 ELSE r.gpu_count END USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER "endpoint_replicas_allocation_check" AFTER INSERT OR UPDATE OF "status", "gpu_count" ON "endpoint_replicas"
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "endpoint_replicas_allocation_check"();

-- Serving samples: raw (idempotent per endpoint, replica and time) and per-minute rollups.
CREATE TABLE "endpoint_metrics" (
    "id"           BIGSERIAL NOT NULL,
    "endpoint_id"  UUID NOT NULL,
    "replica_id"   UUID,
    "recorded_at"  TIMESTAMPTZ(3) NOT NULL,
    "requests"     INTEGER NOT NULL,
    "errors"       INTEGER NOT NULL,
    "p50_ms"       REAL NOT NULL,
    "p95_ms"       REAL NOT NULL,
    "p99_ms"       REAL NOT NULL,
    "tokens_per_s" REAL,
    "healthy"      BOOLEAN NOT NULL DEFAULT true,
    CONSTRAINT "endpoint_metrics_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "endpoint_metrics_counts_check" CHECK ("requests" >= 0 AND "errors" >= 0 AND "errors" <= "requests"),
    CONSTRAINT "endpoint_metrics_latency_check" CHECK ("p50_ms" >= 0 AND "p50_ms" <= "p95_ms" AND "p95_ms" <= "p99_ms"),
    CONSTRAINT "endpoint_metrics_tokens_check" CHECK ("tokens_per_s" IS NULL OR "tokens_per_s" >= 0)
);
CREATE UNIQUE INDEX "endpoint_metrics_sample_key" ON "endpoint_metrics"("endpoint_id", (COALESCE("replica_id", '00000000-0000-0000-0000-000000000000'::uuid)), "recorded_at");
CREATE INDEX "endpoint_metrics_recorded_at_idx" ON "endpoint_metrics" USING brin ("recorded_at");
ALTER TABLE "endpoint_metrics" ADD CONSTRAINT "endpoint_metrics_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "endpoint_metrics_1m" (
    "endpoint_id"        UUID NOT NULL,
    "bucket"             TIMESTAMPTZ(3) NOT NULL,
    "samples"            INTEGER NOT NULL,
    "replicas_reporting" INTEGER NOT NULL,
    "unhealthy_samples"  INTEGER NOT NULL,
    "requests"           BIGINT NOT NULL,
    "errors"             BIGINT NOT NULL,
    "p50_ms"             REAL NOT NULL,
    "p95_ms"             REAL NOT NULL,
    "p95_max_ms"         REAL NOT NULL,
    "p99_ms"             REAL NOT NULL,
    "tokens_per_s"       REAL,
    CONSTRAINT "endpoint_metrics_1m_pkey" PRIMARY KEY ("endpoint_id", "bucket"),
    CONSTRAINT "endpoint_metrics_1m_bucket_check" CHECK ("bucket" = date_trunc('minute', "bucket")),
    CONSTRAINT "endpoint_metrics_1m_counts_check" CHECK ("samples" > 0 AND "errors" <= "requests")
);
ALTER TABLE "endpoint_metrics_1m" ADD CONSTRAINT "endpoint_metrics_1m_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Billing: a usage event is a job run's segment or a replica's, never both, never twice.
ALTER TABLE "usage_events" ALTER COLUMN "job_id" DROP NOT NULL;
ALTER TABLE "usage_events" ADD COLUMN "replica_id" UUID;
ALTER TABLE "usage_events" ADD COLUMN "endpoint_id" UUID;
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_subject_check" CHECK (
    ("job_id" IS NOT NULL AND "replica_id" IS NULL AND "endpoint_id" IS NULL) OR ("job_id" IS NULL AND "replica_id" IS NOT NULL AND "endpoint_id" IS NOT NULL));
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_replica_no_overlap" EXCLUDE USING gist ("replica_id" WITH =, tstzrange("started_at", "ended_at", '[)') WITH &&);
CREATE UNIQUE INDEX "usage_events_replica_final_key" ON "usage_events"("replica_id") WHERE "kind" = 'final';
-- endpoint_id is kept for invoicing by endpoint; this reference keeps it the replica's endpoint
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_replica_endpoint_fkey" FOREIGN KEY ("replica_id", "endpoint_id") REFERENCES "endpoint_replicas"("id", "endpoint_id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "invoice_lines" ALTER COLUMN "job_id" DROP NOT NULL;
ALTER TABLE "invoice_lines" ADD COLUMN "endpoint_id" UUID;
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_subject_check" CHECK (num_nonnulls("job_id", "endpoint_id") = 1);
CREATE UNIQUE INDEX "invoice_lines_invoice_id_endpoint_id_key" ON "invoice_lines"("invoice_id", "endpoint_id");
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "endpoints"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- One segment of billable GPU time for a job run or a replica: from where the subject's last
-- segment ended (or its start) to p_end, at the rate in force when the segment starts; prepaid
-- tenants are charged in the same statement. Rounding as before: gpu_seconds = round(seconds × GPUs);
-- amount = round(gpu_seconds × cents_per_hour / 3600), half up, once per segment.
CREATE FUNCTION "bill_segment"(p_job UUID, p_replica UUID, p_endpoint UUID, p_tenant UUID, p_attempt INTEGER, p_gpu_type TEXT,
                               p_gpu_count INTEGER, p_started TIMESTAMPTZ, p_kind TEXT, p_end TIMESTAMPTZ) RETURNS UUID LANGUAGE plpgsql AS $$
DECLARE
    last_end TIMESTAMPTZ;
    seg_start TIMESTAMPTZ;
    seg_end TIMESTAMPTZ;
    rate INTEGER;
    mode TEXT;
    secs BIGINT;
    amount BIGINT;
    ev UUID;
BEGIN
    IF p_started IS NULL THEN RETURN NULL; END IF;
    IF p_job IS NOT NULL THEN
        SELECT max("ended_at") INTO last_end FROM "usage_events" WHERE "job_id" = p_job AND "attempt" = p_attempt;
    ELSE
        SELECT max("ended_at") INTO last_end FROM "usage_events" WHERE "replica_id" = p_replica;
    END IF;
    seg_start := GREATEST(p_started, COALESCE(last_end, p_started));
    -- an accrual up to a time already billed has nothing to add
    IF p_kind = 'accrual' AND p_end <= seg_start THEN RETURN NULL; END IF;
    seg_end := date_trunc('milliseconds', GREATEST(p_end, seg_start));
    SELECT "cents_per_hour" INTO rate FROM "gpu_rates"
     WHERE "gpu_type" IN (p_gpu_type, '*') AND "effective_from" <= seg_start
     ORDER BY ("gpu_type" = '*'), "effective_from" DESC LIMIT 1;
    rate := COALESCE(rate, 0);
    SELECT "billing_mode" INTO mode FROM "tenants" WHERE "id" = p_tenant;
    secs := round(extract(epoch FROM seg_end - seg_start) * p_gpu_count);
    amount := round(secs::numeric * rate / 3600);
    INSERT INTO "usage_events" ("tenant_id", "job_id", "replica_id", "endpoint_id", "attempt", "kind", "settlement", "gpu_type", "gpu_count",
                                "started_at", "ended_at", "gpu_seconds", "cents_per_hour", "amount_cents")
    VALUES (p_tenant, p_job, p_replica, p_endpoint, p_attempt, p_kind, mode, p_gpu_type, p_gpu_count, seg_start, seg_end, secs, rate, amount)
    RETURNING "id" INTO ev;
    IF mode = 'prepaid' AND amount > 0 THEN
        INSERT INTO "ledger_entries" ("tenant_id", "kind", "amount_cents", "usage_event_id", "description", "created_by")
        VALUES (p_tenant, 'charge', -amount, ev, p_gpu_count || ' × ' || p_gpu_type || ', ' || secs || ' GPU-seconds' || CASE WHEN p_replica IS NULL THEN '' ELSE ' (endpoint replica)' END, 'meter');
    END IF;
    RETURN ev;
END $$;

CREATE OR REPLACE FUNCTION "bill_usage_segment"(p_job UUID, p_tenant UUID, p_attempt INTEGER, p_gpu_type TEXT, p_gpu_count INTEGER,
                                                p_run_started TIMESTAMPTZ, p_kind TEXT, p_end TIMESTAMPTZ) RETURNS UUID LANGUAGE sql AS $$
    SELECT "bill_segment"(p_job, NULL, NULL, p_tenant, p_attempt, p_gpu_type, p_gpu_count, p_run_started, p_kind, p_end)
$$;

CREATE FUNCTION "bill_replica_segment"(p_replica UUID, p_kind TEXT, p_end TIMESTAMPTZ) RETURNS UUID LANGUAGE sql AS $$
    SELECT "bill_segment"(NULL, r.id, r.endpoint_id, r.tenant_id, 1, r.gpu_type, r.gpu_count, r.started_at, p_kind, p_end)
      FROM "endpoint_replicas" r WHERE r.id = p_replica
$$;

-- A replica that stops produces its final usage event in the same transaction, whatever stopped it.
CREATE FUNCTION "endpoint_replicas_bill_stop"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "bill_replica_segment"(NEW."id", 'final', now());
    RETURN NULL;
END $$;
CREATE TRIGGER "endpoint_replicas_bill_stop" AFTER UPDATE OF "status" ON "endpoint_replicas"
    FOR EACH ROW WHEN (OLD."status" <> 'stopped' AND NEW."status" = 'stopped') EXECUTE FUNCTION "endpoint_replicas_bill_stop"();
