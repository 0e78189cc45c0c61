-- Interactive GPU pods: a tenant's long-lived container with GPUs, published ports and an SSH key.
-- A pod holds GPUs through the same allocator, quota and database guarantees as jobs and
-- endpoint replicas (a GPU has one holder across all three), is placed by the same scheduler, and
-- every time it runs is one placement with its own fence, billed per second while it runs.
-- Existing functions are left alone except tenant_gpus_in_use, the one definition of "in use",
-- which gains the pods' GPUs, and the reservations' two guards and public node_work view, which
-- learn that a pod holds its node's GPUs with no declared end (CREATE OR REPLACE, same signatures).

-- Where the fleet reaches a node: its agent reports it at registration. Tenants' SSH commands name
-- it, and the inference gateway connects to it (on ports the agent published) and nowhere else, so
-- two nodes never claim one address.
ALTER TABLE "nodes" ADD COLUMN "address" TEXT;
ALTER TABLE "nodes" ADD CONSTRAINT "nodes_address_check" CHECK ("address" IS NULL OR ("address" ~ '^[0-9A-Fa-f.:]{2,45}$'));
CREATE UNIQUE INDEX "nodes_address_key" ON "nodes"("address") WHERE "address" IS NOT NULL;

CREATE TABLE "pods" (
    "id"                 UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id"          UUID NOT NULL,
    "name"               TEXT NOT NULL,
    "gpu_type"           TEXT NOT NULL,
    "gpu_count"          INTEGER NOT NULL,
    "cluster_id"         UUID,
    "image"              TEXT NOT NULL,
    "ports"              INTEGER[] NOT NULL DEFAULT '{}',
    "ssh_public_key"     TEXT,
    "restart_on_failure" BOOLEAN NOT NULL DEFAULT false,
    "status"             TEXT NOT NULL DEFAULT 'pending',
    "status_reason"      TEXT,
    -- why a pending pod waits (quota, capacity, billing), as the scheduler last saw it
    "pending_reason"     TEXT,
    -- placements so far; the current one while starting, running or stopping
    "attempts"           INTEGER NOT NULL DEFAULT 0,
    "fence"              UUID,
    "node_id"            UUID,
    "created_by"         TEXT NOT NULL,
    "created_at"         TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at"         TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "terminated_at"      TIMESTAMPTZ(3),
    CONSTRAINT "pods_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "pods_id_tenant_key" UNIQUE ("id", "tenant_id"),
    CONSTRAINT "pods_status_check" CHECK ("status" IN ('pending', 'starting', 'running', 'stopping', 'stopped', 'failed', 'terminated')),
    CONSTRAINT "pods_name_check" CHECK (length("name") BETWEEN 1 AND 100),
    CONSTRAINT "pods_gpu_count_check" CHECK ("gpu_count" BETWEEN 1 AND 64),
    CONSTRAINT "pods_gpu_type_check" CHECK (length("gpu_type") BETWEEN 1 AND 32),
    -- an image reference as a container runtime reads it, never an option
    CONSTRAINT "pods_image_check" CHECK ("image" ~ '^[A-Za-z0-9][A-Za-z0-9._/:@-]*$' AND length("image") <= 500),
    CONSTRAINT "pods_ports_check" CHECK (cardinality("ports") <= 16 AND 0 < ALL("ports") AND 65536 > ALL("ports")),
    -- one line of an OpenSSH public key: no options, no line breaks
    CONSTRAINT "pods_ssh_key_check" CHECK ("ssh_public_key" IS NULL OR ("ssh_public_key" ~ '^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com) [A-Za-z0-9+/]+={0,3}( [ -~]{0,200})?$' AND length("ssh_public_key") <= 16384)),
    CONSTRAINT "pods_attempts_check" CHECK ("attempts" >= 0),
    -- a pod is somewhere exactly while a placement of it is open
    CONSTRAINT "pods_placed_check" CHECK (("status" IN ('starting', 'running', 'stopping')) = ("fence" IS NOT NULL AND "node_id" IS NOT NULL AND "attempts" >= 1)),
    CONSTRAINT "pods_terminated_check" CHECK (("status" = 'terminated') = ("terminated_at" IS NOT NULL))
);
CREATE UNIQUE INDEX "pods_tenant_name_key" ON "pods"("tenant_id", "name") WHERE "status" <> 'terminated';
CREATE INDEX "pods_tenant_id_created_at_idx" ON "pods"("tenant_id", "created_at");
CREATE INDEX "pods_waiting_idx" ON "pods"("created_at") WHERE "status" = 'pending';
CREATE INDEX "pods_node_id_idx" ON "pods"("node_id") WHERE "node_id" IS NOT NULL;
ALTER TABLE "pods" ADD CONSTRAINT "pods_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "pods" ADD CONSTRAINT "pods_cluster_id_fkey" FOREIGN KEY ("cluster_id") REFERENCES "clusters"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "pods" ADD CONSTRAINT "pods_node_id_fkey" FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Every transition of a pod, with who and why.
CREATE TABLE "pod_events" (
    "id"          BIGSERIAL NOT NULL,
    "pod_id"      UUID NOT NULL,
    "from_status" TEXT,
    "to_status"   TEXT NOT NULL,
    "reason"      TEXT NOT NULL,
    "actor"       TEXT NOT NULL,
    "created_at"  TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "pod_events_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "pod_events_change_check" CHECK ("from_status" IS DISTINCT FROM "to_status")
);
CREATE INDEX "pod_events_pod_id_idx" ON "pod_events"("pod_id", "id");
ALTER TABLE "pod_events" ADD CONSTRAINT "pod_events_pod_id_fkey" FOREIGN KEY ("pod_id") REFERENCES "pods"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Each time a pod runs somewhere: its GPUs, from when it held them, from when its container ran
-- (what is billed), until when, and the host ports its agent published.
CREATE TABLE "pod_placements" (
    "pod_id"        UUID NOT NULL,
    "attempt"       INTEGER NOT NULL,
    "fence"         UUID NOT NULL,
    "node_id"       UUID NOT NULL,
    "gpu_type"      TEXT NOT NULL,
    "gpu_ids"       UUID[] NOT NULL,
    "started_at"    TIMESTAMPTZ(3) NOT NULL,
    "running_at"    TIMESTAMPTZ(3),
    "ended_at"      TIMESTAMPTZ(3),
    "end_status"    TEXT,
    "ports"         JSONB NOT NULL DEFAULT '[]',
    "exit_code"     INTEGER,
    "log_bytes"     BIGINT NOT NULL DEFAULT 0,
    "log_truncated" BOOLEAN NOT NULL DEFAULT false,
    CONSTRAINT "pod_placements_pkey" PRIMARY KEY ("pod_id", "attempt"),
    CONSTRAINT "pod_placements_fence_key" UNIQUE ("fence"),
    CONSTRAINT "pod_placements_attempt_check" CHECK ("attempt" >= 1),
    CONSTRAINT "pod_placements_gpus_check" CHECK (cardinality("gpu_ids") BETWEEN 1 AND 64),
    CONSTRAINT "pod_placements_times_check" CHECK (("running_at" IS NULL OR "running_at" >= "started_at") AND ("ended_at" IS NULL OR "ended_at" >= COALESCE("running_at", "started_at"))),
    CONSTRAINT "pod_placements_ended_check" CHECK (("ended_at" IS NULL) = ("end_status" IS NULL)),
    CONSTRAINT "pod_placements_ports_check" CHECK (jsonb_typeof("ports") = 'array' AND jsonb_array_length("ports") <= 17),
    CONSTRAINT "pod_placements_log_bytes_check" CHECK ("log_bytes" >= 0)
);
ALTER TABLE "pod_placements" ADD CONSTRAINT "pod_placements_pod_id_fkey" FOREIGN KEY ("pod_id") REFERENCES "pods"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "pod_placements" ADD CONSTRAINT "pod_placements_node_id_fkey" FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
-- a pod runs in one place at a time
CREATE UNIQUE INDEX "pod_placements_open_key" ON "pod_placements"("pod_id") WHERE "ended_at" IS NULL;
CREATE INDEX "pod_placements_gpu_ids_idx" ON "pod_placements" USING gin ("gpu_ids");

-- A GPU's holder: a job, a replica or a pod, never two of them.
ALTER TABLE "gpus" ADD COLUMN "allocated_pod_id" UUID;
ALTER TABLE "gpus" ADD CONSTRAINT "gpus_single_holder_check" CHECK (num_nonnulls("allocated_job_id", "allocated_replica_id", "allocated_pod_id") <= 1);
ALTER TABLE "gpus" ADD CONSTRAINT "gpus_allocated_pod_id_fkey" FOREIGN KEY ("allocated_pod_id") REFERENCES "pods"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE INDEX "gpus_allocated_pod_id_idx" ON "gpus"("allocated_pod_id") WHERE "allocated_pod_id" IS NOT NULL;

-- The one definition of a tenant's GPUs in use, now over jobs, replicas and pods: the reservations
-- migration's definition (reserved nodes count whole while held, the tenant's work inside them once)
-- with the pods' GPUs added. Pods never run inside a reservation (they declare no end), so all count.
CREATE OR REPLACE FUNCTION "tenant_gpus_in_use"(p_tenants UUID[]) RETURNS TABLE ("tenant_id" UUID, "in_use" INTEGER) LANGUAGE sql STABLE AS $$
    SELECT x.tenant_id, sum(x.n)::int FROM (
        SELECT j.tenant_id, 1 AS n FROM gpus g JOIN jobs j ON j.id = g.allocated_job_id
         WHERE j.tenant_id = ANY(p_tenants)
           AND NOT EXISTS (SELECT 1 FROM reservation_nodes rn WHERE rn.node_id = g.node_id AND rn.tenant_id = j.tenant_id AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now())
        UNION ALL
        SELECT r.tenant_id, 1 FROM gpus g JOIN endpoint_replicas r ON r.id = g.allocated_replica_id
         WHERE r.tenant_id = ANY(p_tenants)
           AND NOT EXISTS (SELECT 1 FROM reservation_nodes rn WHERE rn.node_id = g.node_id AND rn.tenant_id = r.tenant_id AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now())
        UNION ALL
        SELECT p.tenant_id, 1 FROM gpus g JOIN pods p ON p.id = g.allocated_pod_id WHERE p.tenant_id = ANY(p_tenants)
        UNION ALL
        SELECT rn.tenant_id, rn.gpu_count FROM reservation_nodes rn
         WHERE rn.tenant_id = ANY(p_tenants) AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now()
    ) x GROUP BY x.tenant_id
$$;

-- Pod allocations, once per statement (gpus_quota_check covers tenants gaining through jobs and
-- replicas; this covers those gaining through pods, with the same definition of in use): new ones
-- only on healthy GPUs of available nodes that run containers, every pod a statement touched holds
-- exactly its GPUs while starting or running and none otherwise, and no tenant passes its quota.
CREATE FUNCTION "gpus_pod_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad RECORD;
    gainers UUID[];
BEGIN
    SELECT n.id, nd.containers INTO bad
      FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN nodes nd ON nd.id = n.node_id
     WHERE n.allocated_pod_id IS NOT NULL AND o.allocated_pod_id IS DISTINCT FROM n.allocated_pod_id
       AND (n.status <> 'available' OR nd.status <> 'available' OR NOT nd.containers)
     LIMIT 1;
    IF FOUND AND bad.containers THEN
        RAISE EXCEPTION 'GPU % is unhealthy or its node is not available for a new pod', bad.id USING ERRCODE = '23514';
    ELSIF FOUND THEN
        RAISE EXCEPTION 'GPU % is on a node that does not run containers; pods are containers', bad.id USING ERRCODE = '23514';
    END IF;
    WITH touched AS (
        SELECT allocated_pod_id AS id FROM new_rows WHERE allocated_pod_id IS NOT NULL
        UNION SELECT allocated_pod_id FROM old_rows WHERE allocated_pod_id IS NOT NULL
    )
    SELECT p.id, p.status, p.gpu_count, c.held INTO bad
      FROM touched t JOIN pods p ON p.id = t.id
      CROSS JOIN LATERAL (SELECT count(*) AS held FROM gpus g WHERE g.allocated_pod_id = p.id) c
     WHERE (p.status IN ('starting', 'running') AND c.held <> p.gpu_count) OR (p.status NOT IN ('starting', 'running') AND c.held <> 0)
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION '% pod % would hold % GPUs (needs %)', bad.status, bad.id, bad.held, bad.gpu_count USING ERRCODE = '23514';
    END IF;
    SELECT array_agg(DISTINCT p.tenant_id) INTO gainers
      FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN pods p ON p.id = n.allocated_pod_id
     WHERE o.allocated_pod_id IS DISTINCT FROM n.allocated_pod_id;
    IF gainers IS NOT NULL THEN
        SELECT t.id, t.gpu_quota, u.in_use INTO bad
          FROM tenant_gpus_in_use(gainers) u JOIN tenants t ON t.id = u.tenant_id
         WHERE u.in_use > t.gpu_quota LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'tenant % would hold % GPUs, over its quota of %', bad.id, bad.in_use, bad.gpu_quota USING ERRCODE = '23514';
        END IF;
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER "gpus_pod_check" AFTER UPDATE ON "gpus"
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "gpus_pod_check"();

-- The same promise from the pod's side, at commit: a starting or running pod holds exactly
-- gpu_count GPUs, any other none.
CREATE FUNCTION "pods_allocation_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    p RECORD;
    held INTEGER;
BEGIN
    SELECT status, gpu_count INTO p FROM pods WHERE id = NEW.id;
    IF NOT FOUND THEN RETURN NULL; END IF;
    SELECT count(*) INTO held FROM gpus WHERE allocated_pod_id = NEW.id;
    IF (p.status IN ('starting', 'running') AND held <> p.gpu_count) OR (p.status NOT IN ('starting', 'running') AND held <> 0) THEN
        RAISE EXCEPTION '% pod % holds % GPUs', p.status, NEW.id, held USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER "pods_allocation_check" AFTER INSERT OR UPDATE OF "status", "gpu_count" ON "pods"
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "pods_allocation_check"();

-- A suspended tenant's pod never starts (the function suspension added for jobs and replicas).
CREATE TRIGGER "pods_tenant_active_guard" BEFORE UPDATE OF "status" ON "pods"
    FOR EACH ROW WHEN (NEW."status" = 'starting' AND OLD."status" <> 'starting') EXECUTE FUNCTION "work_tenant_active_guard"();

-- Billing: a pod's running spans are usage segments like a job run's, never overlapping (its own
-- exclusion constraint, over all its placements) and each placement's final segment once.
ALTER TABLE "usage_events" ADD COLUMN "pod_id" UUID;
ALTER TABLE "usage_events" DROP CONSTRAINT "usage_events_subject_check";
-- (the reservations migration's three subjects, each now without a pod, and the pod's own)
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_subject_check" CHECK (
    ("job_id" IS NOT NULL AND "replica_id" IS NULL AND "endpoint_id" IS NULL AND "reservation_node_id" IS NULL AND "reservation_id" IS NULL AND "pod_id" IS NULL)
 OR ("job_id" IS NULL AND "replica_id" IS NOT NULL AND "endpoint_id" IS NOT NULL AND "reservation_node_id" IS NULL AND "reservation_id" IS NULL AND "pod_id" IS NULL)
 OR ("job_id" IS NULL AND "replica_id" IS NULL AND "endpoint_id" IS NULL AND "reservation_node_id" IS NOT NULL AND "reservation_id" IS NOT NULL AND "pod_id" IS NULL)
 OR ("job_id" IS NULL AND "replica_id" IS NULL AND "endpoint_id" IS NULL AND "reservation_node_id" IS NULL AND "reservation_id" IS NULL AND "pod_id" IS NOT NULL));
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_pod_no_overlap" EXCLUDE USING gist ("pod_id" WITH =, tstzrange("started_at", "ended_at", '[)') WITH &&);
CREATE UNIQUE INDEX "usage_events_pod_final_key" ON "usage_events"("pod_id", "attempt") WHERE "kind" = 'final' AND "pod_id" IS NOT NULL;
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_pod_placement_fkey" FOREIGN KEY ("pod_id", "attempt") REFERENCES "pod_placements"("pod_id", "attempt") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "invoice_lines" ADD COLUMN "pod_id" UUID;
ALTER TABLE "invoice_lines" DROP CONSTRAINT "invoice_lines_subject_check";
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_subject_check" CHECK (num_nonnulls("job_id", "endpoint_id", "reservation_id", "pod_id") = 1);
CREATE UNIQUE INDEX "invoice_lines_invoice_id_pod_id_key" ON "invoice_lines"("invoice_id", "pod_id");
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_pod_id_fkey" FOREIGN KEY ("pod_id") REFERENCES "pods"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- One segment of a pod placement's running time, from where its last one ended (or from when its
-- container ran) to p_end: bill_segment's arithmetic (rate in force at the segment's start,
-- gpu_seconds = round(seconds × GPUs), amount rounded half up once per segment, prepaid tenants
-- charged in the same statement), written for the pod's own subject columns.
CREATE FUNCTION "bill_pod_segment"(p_pod UUID, p_attempt INTEGER, p_kind TEXT, p_end TIMESTAMPTZ) RETURNS UUID LANGUAGE plpgsql AS $$
DECLARE
    s RECORD;
    ev UUID;
BEGIN
    WITH span AS (
        SELECT p.tenant_id, pl.gpu_type, cardinality(pl.gpu_ids) AS gpus, t.billing_mode,
               GREATEST(pl.running_at, COALESCE((SELECT max(u.ended_at) FROM usage_events u WHERE u.pod_id = p_pod AND u.attempt = p_attempt), pl.running_at)) AS seg_start
          FROM pod_placements pl JOIN pods p ON p.id = pl.pod_id JOIN tenants t ON t.id = p.tenant_id
         WHERE pl.pod_id = p_pod AND pl.attempt = p_attempt AND pl.running_at IS NOT NULL
    ), priced AS (
        SELECT span.*, date_trunc('milliseconds', GREATEST(p_end, span.seg_start)) AS seg_end,
               COALESCE((SELECT r.cents_per_hour FROM gpu_rates r WHERE r.gpu_type IN (span.gpu_type, '*') AND r.effective_from <= span.seg_start
                          ORDER BY (r.gpu_type = '*'), r.effective_from DESC LIMIT 1), 0) AS rate
          FROM span
    )
    SELECT priced.*, round(extract(epoch FROM priced.seg_end - priced.seg_start) * priced.gpus)::bigint AS secs INTO s FROM priced;
    -- never ran (nothing to bill), or an accrual up to a time already billed
    IF NOT FOUND OR (p_kind = 'accrual' AND p_end <= s.seg_start) THEN RETURN NULL; END IF;
    INSERT INTO "usage_events" ("tenant_id", "pod_id", "attempt", "kind", "settlement", "gpu_type", "gpu_count", "started_at", "ended_at", "gpu_seconds", "cents_per_hour", "amount_cents")
    VALUES (s.tenant_id, p_pod, p_attempt, p_kind, s.billing_mode, s.gpu_type, s.gpus, s.seg_start, s.seg_end, s.secs, s.rate, round(s.secs::numeric * s.rate / 3600))
    RETURNING "id" INTO ev;
    INSERT INTO "ledger_entries" ("tenant_id", "kind", "amount_cents", "usage_event_id", "description", "created_by")
    SELECT u.tenant_id, 'charge', -u.amount_cents, u.id, u.gpu_count || ' × ' || u.gpu_type || ', ' || u.gpu_seconds || ' GPU-seconds (pod)', 'meter'
      FROM usage_events u WHERE u.id = ev AND u.settlement = 'prepaid' AND u.amount_cents > 0;
    RETURN ev;
END $$;

-- A placement that ends bills its final segment in the same transaction, whatever ended it.
CREATE FUNCTION "pod_placements_bill_end"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "bill_pod_segment"(NEW."pod_id", NEW."attempt", 'final', NEW."ended_at");
    RETURN NULL;
END $$;
CREATE TRIGGER "pod_placements_bill_end" AFTER UPDATE OF "ended_at" ON "pod_placements"
    FOR EACH ROW WHEN (OLD."ended_at" IS NULL AND NEW."ended_at" IS NOT NULL) EXECUTE FUNCTION "pod_placements_bill_end"();

-- Pods' output, per placement, in the agent's sequenced chunks (like job attempts').
ALTER TABLE "workload_logs" ADD COLUMN "pod_id" UUID;
ALTER TABLE "workload_logs" DROP CONSTRAINT "workload_logs_subject_check";
ALTER TABLE "workload_logs" ADD CONSTRAINT "workload_logs_subject_check" CHECK (
    ("job_id" IS NOT NULL AND "attempt" IS NOT NULL AND "replica_id" IS NULL AND "pod_id" IS NULL)
    OR ("job_id" IS NULL AND "attempt" IS NULL AND "replica_id" IS NOT NULL AND "pod_id" IS NULL)
    OR ("job_id" IS NULL AND "attempt" IS NOT NULL AND "replica_id" IS NULL AND "pod_id" IS NOT NULL));
ALTER TABLE "workload_logs" ADD CONSTRAINT "workload_logs_pod_placement_fkey" FOREIGN KEY ("pod_id", "attempt") REFERENCES "pod_placements"("pod_id", "attempt") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE UNIQUE INDEX "workload_logs_pod_seq_key" ON "workload_logs"("pod_id", "attempt", "seq") WHERE "pod_id" IS NOT NULL;

-- A tenant hears when its pod was interrupted by its node (quarantined, in maintenance, lost).
-- Other branches extend these lists too: add the pod's type and subject in place, keeping theirs.
DO $$
DECLARE
    c RECORD;
BEGIN
    FOR c IN SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
              WHERE conrelid = '"alert_events"'::regclass AND conname IN ('alert_events_type_check', 'alert_events_rule_check', 'alert_events_subject_check')
    LOOP
        IF c.conname = 'alert_events_subject_check' THEN
            IF position('''pod''' IN c.def) = 0 THEN
                EXECUTE format('ALTER TABLE "alert_events" DROP CONSTRAINT %I, ADD CONSTRAINT %I %s', c.conname, c.conname, replace(c.def, 'ARRAY[', 'ARRAY[''pod''::text, '));
            END IF;
        ELSIF position('''pod_interrupted''' IN c.def) = 0 THEN
            EXECUTE format('ALTER TABLE "alert_events" DROP CONSTRAINT %I, ADD CONSTRAINT %I %s', c.conname, c.conname, replace(c.def, 'ARRAY[', 'ARRAY[''pod_interrupted''::text, '));
        END IF;
    END LOOP;
END $$;

-- Reservations and pods. A pod declares no end: a new pod allocation never goes to a node that a
-- reservation holds now (another tenant's, or its own: pods run on demand, never covered) or books
-- later; and a node is never booked while a pod holds GPUs on it. The reservations migration's
-- guards, each with the pod's case added; the public view of busy GPUs counts pods' (busy, no end).
CREATE OR REPLACE FUNCTION "gpus_reservation_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad RECORD;
BEGIN
    SELECT n.id AS gpu_id, rn.reservation_id INTO bad
      FROM new_rows n JOIN old_rows o ON o.id = n.id
      JOIN reservation_nodes rn ON rn.node_id = n.node_id AND rn.live AND rn.ends_at > now()
     WHERE n.allocated_pod_id IS NOT NULL AND o.allocated_pod_id IS DISTINCT FROM n.allocated_pod_id
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'GPU % is on a node reservation % holds or books: a pod declares no end and runs on demand only', bad.gpu_id, bad.reservation_id USING ERRCODE = '23514';
    END IF;
    WITH fresh AS (
        SELECT n.id AS gpu_id, n.node_id, j.tenant_id, j.reservation_id AS named,
               CASE WHEN j.duration_s IS NULL THEN 'infinity'::timestamptz ELSE now() + make_interval(secs => j.duration_s) END AS work_end
          FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN jobs j ON j.id = n.allocated_job_id
         WHERE o.allocated_job_id IS DISTINCT FROM n.allocated_job_id
        UNION ALL
        SELECT n.id, n.node_id, r.tenant_id, e.reservation_id, 'infinity'::timestamptz
          FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN endpoint_replicas r ON r.id = n.allocated_replica_id JOIN endpoints e ON e.id = r.endpoint_id
         WHERE o.allocated_replica_id IS DISTINCT FROM n.allocated_replica_id
    )
    -- work inside its tenant's reservation stops when that reservation ends: it overlaps nothing after
    SELECT f.gpu_id, f.named, h.reservation_id AS holder, h.starts_at, (h.tenant_id = f.tenant_id) AS own INTO bad
      FROM fresh f
      LEFT JOIN LATERAL (
        SELECT min(rn.ends_at) AS ends_at FROM reservation_nodes rn
         WHERE rn.node_id = f.node_id AND rn.live AND rn.tenant_id = f.tenant_id AND rn.starts_at <= now() AND rn.ends_at > now()
      ) inside ON true
      LEFT JOIN LATERAL (
        SELECT rn.reservation_id, rn.tenant_id, rn.starts_at FROM reservation_nodes rn
         WHERE rn.node_id = f.node_id AND rn.live AND rn.ends_at > now() AND rn.starts_at < LEAST(f.work_end, COALESCE(inside.ends_at, 'infinity'))
           AND (rn.tenant_id <> f.tenant_id OR rn.starts_at > now() OR rn.reservation_id <> COALESCE(f.named, rn.reservation_id))
         LIMIT 1
      ) h ON true
     WHERE h.reservation_id IS NOT NULL
        OR (f.named IS NOT NULL AND NOT EXISTS (
              SELECT 1 FROM reservation_nodes rn WHERE rn.node_id = f.node_id AND rn.reservation_id = f.named AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now()))
     LIMIT 1;
    IF NOT FOUND THEN RETURN NULL; END IF;
    IF bad.holder IS NULL THEN
        RAISE EXCEPTION 'GPU % is not on a node its reservation % holds now', bad.gpu_id, bad.named USING ERRCODE = '23514';
    ELSIF bad.starts_at > now() THEN
        RAISE EXCEPTION 'GPU % is on a node reservation % books from %: work placed there must end before', bad.gpu_id, bad.holder, bad.starts_at USING ERRCODE = '23514';
    ELSIF NOT bad.own THEN
        RAISE EXCEPTION 'GPU % is on a node another tenant''s reservation % holds', bad.gpu_id, bad.holder USING ERRCODE = '23514';
    ELSE
        RAISE EXCEPTION 'GPU % is on a node of reservation %, not of the reservation the work names', bad.gpu_id, bad.holder USING ERRCODE = '23514';
    END IF;
END;
$$;
CREATE OR REPLACE FUNCTION "reservation_nodes_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad RECORD;
    rtype TEXT;
    present INTEGER;
    wrong INTEGER;
BEGIN
    IF NOT NEW."live" THEN RETURN NEW; END IF;
    -- a window that only shrank (a release, a cut at a swap) takes nothing new
    IF TG_OP = 'UPDATE' AND OLD."live" AND NEW."starts_at" >= OLD."starts_at" AND NEW."ends_at" <= OLD."ends_at" AND NEW."node_id" = OLD."node_id" THEN
        RETURN NEW;
    END IF;
    PERFORM 1 FROM "gpus" WHERE "node_id" = NEW."node_id" ORDER BY "id" FOR UPDATE;
    IF TG_OP = 'INSERT' THEN
        SELECT "gpu_type" INTO rtype FROM "reservations" WHERE "id" = NEW."reservation_id";
        SELECT count(*), count(*) FILTER (WHERE g."gpu_type" <> rtype OR g."status" <> 'available') INTO present, wrong
          FROM "gpus" g WHERE g."node_id" = NEW."node_id" AND g."missing_since" IS NULL;
        IF NOT EXISTS (SELECT 1 FROM "nodes" WHERE "id" = NEW."node_id" AND "status" = 'available') OR wrong > 0 OR present <> NEW."gpu_count" THEN
            RAISE EXCEPTION 'node % is not a whole, healthy % node in service (% GPUs, % unfit, % booked)', NEW."node_id", rtype, present, wrong, NEW."gpu_count" USING ERRCODE = '23P01';
        END IF;
    END IF;
    SELECT g."id", j."id" AS job_id, r."id" AS replica_id INTO bad
      FROM "gpus" g
      LEFT JOIN "jobs" j ON j."id" = g."allocated_job_id"
      LEFT JOIN "job_placements" p ON p."job_id" = j."id" AND p."ended_at" IS NULL
      LEFT JOIN "endpoint_replicas" r ON r."id" = g."allocated_replica_id"
     WHERE g."node_id" = NEW."node_id" AND (
           (j."id" IS NOT NULL AND p."reservation_id" IS DISTINCT FROM NEW."reservation_id"
              AND (j."duration_s" IS NULL OR j."started_at" + make_interval(secs => j."duration_s") > NEW."starts_at"))
        OR (r."id" IS NOT NULL AND r."reservation_id" IS DISTINCT FROM NEW."reservation_id"))
     LIMIT 1;
    IF NOT FOUND THEN
        SELECT g."id", NULL::uuid AS job_id, NULL::uuid AS replica_id, g."allocated_pod_id" AS pod_id INTO bad
          FROM "gpus" g WHERE g."node_id" = NEW."node_id" AND g."allocated_pod_id" IS NOT NULL LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'node % runs pod %, which declares no end and is not this reservation''s', NEW."node_id", bad.pod_id USING ERRCODE = '23P01';
        END IF;
    END IF;
    IF FOUND THEN
        RAISE EXCEPTION 'node % runs work (% %) that would still run at % and is not this reservation''s', NEW."node_id",
            CASE WHEN bad.job_id IS NOT NULL THEN 'job' ELSE 'replica' END, COALESCE(bad.job_id, bad.replica_id), NEW."starts_at" USING ERRCODE = '23P01';
    END IF;
    RETURN NEW;
END $$;
CREATE OR REPLACE VIEW "public_api"."node_work" AS
    SELECT g.node_id, CASE WHEN j.duration_s IS NOT NULL THEN j.started_at + make_interval(secs => j.duration_s) END AS busy_until, count(*)::int AS gpus
      FROM gpus g LEFT JOIN jobs j ON j.id = g.allocated_job_id
     WHERE g.allocated_job_id IS NOT NULL OR g.allocated_replica_id IS NOT NULL OR g.allocated_pod_id IS NOT NULL
     GROUP BY 1, 2;
