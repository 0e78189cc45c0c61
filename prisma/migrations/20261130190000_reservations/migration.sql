-- Bare-metal tenancy: whole-node reservations over a time window, the work that runs inside them,
-- their billing, and the read-only views the public listener reads through a SELECT-only role.
--
-- A reservation books node_count whole nodes of one GPU type for [starts_at, ends_at). Each node it
-- holds is a row of reservation_nodes with its own window (a node swapped in for a quarantined one
-- holds from the swap to the end; the one it replaced until the swap). The database refuses two
-- live holdings of one node whose windows overlap, whatever code path or race tries, and refuses
-- work on a node that another tenant's reservation holds or that a later reservation books before
-- the work's declared end.

CREATE TABLE "reservations" (
    "id"              UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id"       UUID NOT NULL,
    "gpu_type"        TEXT NOT NULL,
    "node_count"      INTEGER NOT NULL,
    -- the cluster asked for, if any (the nodes are in one cluster either way)
    "cluster_id"      UUID,
    "starts_at"       TIMESTAMPTZ(3) NOT NULL,
    "ends_at"         TIMESTAMPTZ(3) NOT NULL,
    "status"          TEXT NOT NULL DEFAULT 'confirmed',
    -- a held node left service and no replacement was free yet (cleared when it is whole again)
    "degraded_at"     TIMESTAMPTZ(3),
    "degraded_reason" TEXT,
    "ended_at"        TIMESTAMPTZ(3),
    "end_reason"      TEXT,
    "created_by"      TEXT NOT NULL,
    "created_at"      TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at"      TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "reservations_pkey" PRIMARY KEY ("id"),
    -- the target of (reservation, tenant) references: work names only its own tenant's reservation
    CONSTRAINT "reservations_id_tenant_key" UNIQUE ("id", "tenant_id"),
    CONSTRAINT "reservations_status_check" CHECK ("status" IN ('confirmed', 'active', 'completed', 'released', 'cancelled')),
    CONSTRAINT "reservations_window_check" CHECK ("ends_at" > "starts_at"),
    CONSTRAINT "reservations_node_count_check" CHECK ("node_count" BETWEEN 1 AND 1024),
    CONSTRAINT "reservations_gpu_type_check" CHECK ("gpu_type" ~ '^[A-Za-z0-9._-]{1,32}$'),
    CONSTRAINT "reservations_ended_check" CHECK (("status" IN ('completed', 'released', 'cancelled')) = ("ended_at" IS NOT NULL) AND ("ended_at" IS NULL) = ("end_reason" IS NULL)),
    CONSTRAINT "reservations_degraded_check" CHECK (("degraded_at" IS NULL) = ("degraded_reason" IS NULL) AND ("degraded_at" IS NULL OR "status" IN ('confirmed', 'active')))
);
CREATE INDEX "reservations_tenant_id_idx" ON "reservations"("tenant_id", "starts_at");
CREATE INDEX "reservations_live_idx" ON "reservations"("starts_at", "ends_at") WHERE "status" IN ('confirmed', 'active');
ALTER TABLE "reservations" ADD CONSTRAINT "reservations_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "reservations" ADD CONSTRAINT "reservations_cluster_id_fkey" FOREIGN KEY ("cluster_id") REFERENCES "clusters"("id") ON DELETE SET NULL ON UPDATE CASCADE;
-- a suspended tenant books nothing (the same guard that refuses to start its work)
CREATE TRIGGER "reservations_tenant_active_guard" BEFORE INSERT ON "reservations"
    FOR EACH ROW EXECUTE FUNCTION "work_tenant_active_guard"();

-- The nodes a reservation holds, each for its own window. live = false: a holding that never held
-- anything (its reservation was cancelled, or its node was swapped out before the start).
CREATE TABLE "reservation_nodes" (
    "id"             UUID NOT NULL DEFAULT gen_random_uuid(),
    "reservation_id" UUID NOT NULL,
    "tenant_id"      UUID NOT NULL,
    "node_id"        UUID NOT NULL,
    "gpu_count"      INTEGER NOT NULL,
    "starts_at"      TIMESTAMPTZ(3) NOT NULL,
    "ends_at"        TIMESTAMPTZ(3) NOT NULL,
    "live"           BOOLEAN NOT NULL DEFAULT true,
    -- the holding is over and billed (its final usage segment is written when this is set)
    "closed_at"      TIMESTAMPTZ(3),
    "close_reason"   TEXT,
    "created_at"     TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "reservation_nodes_pkey" PRIMARY KEY ("id"),
    -- the target of usage events' (holding, reservation) reference
    CONSTRAINT "reservation_nodes_id_reservation_key" UNIQUE ("id", "reservation_id"),
    CONSTRAINT "reservation_nodes_window_check" CHECK ("ends_at" > "starts_at"),
    CONSTRAINT "reservation_nodes_gpu_count_check" CHECK ("gpu_count" BETWEEN 1 AND 64),
    CONSTRAINT "reservation_nodes_closed_check" CHECK (("closed_at" IS NULL) = ("close_reason" IS NULL) AND ("live" OR "closed_at" IS NOT NULL)),
    -- a live holding is closed (and billed to its end) only once its window is over
    CONSTRAINT "reservation_nodes_close_after_end_check" CHECK ("closed_at" IS NULL OR NOT "live" OR "ends_at" <= "closed_at"),
    -- no node is held twice at any moment
    CONSTRAINT "reservation_nodes_no_double_booking" EXCLUDE USING gist ("node_id" WITH =, tstzrange("starts_at", "ends_at", '[)') WITH &&) WHERE ("live")
);
CREATE INDEX "reservation_nodes_reservation_id_idx" ON "reservation_nodes"("reservation_id");
CREATE INDEX "reservation_nodes_node_live_idx" ON "reservation_nodes"("node_id", "starts_at") WHERE "live";
-- a tenant's holdings, for its quota (reserved GPUs at once in a window)
CREATE INDEX "reservation_nodes_tenant_live_idx" ON "reservation_nodes"("tenant_id", "starts_at") WHERE "live";
ALTER TABLE "reservation_nodes" ADD CONSTRAINT "reservation_nodes_reservation_tenant_fkey" FOREIGN KEY ("reservation_id", "tenant_id") REFERENCES "reservations"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "reservation_nodes" ADD CONSTRAINT "reservation_nodes_node_id_fkey" FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Every change of a reservation, with who and why (append-only).
CREATE TABLE "reservation_events" (
    "id"             BIGSERIAL NOT NULL,
    "reservation_id" UUID NOT NULL,
    "kind"           TEXT NOT NULL,
    "message"        TEXT NOT NULL,
    "actor"          TEXT NOT NULL,
    "node_id"        UUID,
    "details"        JSONB NOT NULL DEFAULT '{}',
    "created_at"     TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "reservation_events_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "reservation_events_kind_check" CHECK ("kind" IN ('created', 'started', 'extended', 'released', 'cancelled', 'completed', 'degraded', 'node_replaced', 'restored', 'work_stopped'))
);
CREATE INDEX "reservation_events_reservation_id_idx" ON "reservation_events"("reservation_id", "id");
ALTER TABLE "reservation_events" ADD CONSTRAINT "reservation_events_reservation_id_fkey" FOREIGN KEY ("reservation_id") REFERENCES "reservations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "reservation_events" ADD CONSTRAINT "reservation_events_node_id_fkey" FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE SET NULL ON UPDATE CASCADE;
CREATE FUNCTION "reservation_events_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'reservation_events is append-only';
END $$;
CREATE TRIGGER "reservation_events_append_only" BEFORE UPDATE OR DELETE ON "reservation_events"
    FOR EACH ROW EXECUTE FUNCTION "reservation_events_append_only"();

-- Work may name the reservation it must run in: its own tenant's (a composite reference).
ALTER TABLE "jobs" ADD COLUMN "reservation_id" UUID;
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_reservation_tenant_fkey" FOREIGN KEY ("reservation_id", "tenant_id") REFERENCES "reservations"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE INDEX "jobs_reservation_id_idx" ON "jobs"("reservation_id") WHERE "reservation_id" IS NOT NULL;
ALTER TABLE "endpoints" ADD COLUMN "reservation_id" UUID;
ALTER TABLE "endpoints" ADD CONSTRAINT "endpoints_reservation_tenant_fkey" FOREIGN KEY ("reservation_id", "tenant_id") REFERENCES "reservations"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;
-- The reservation a placement runs inside (its time is the reservation's, billed once, there).
ALTER TABLE "job_placements" ADD COLUMN "reservation_id" UUID;
ALTER TABLE "job_placements" ADD CONSTRAINT "job_placements_reservation_id_fkey" FOREIGN KEY ("reservation_id") REFERENCES "reservations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "endpoint_replicas" ADD COLUMN "reservation_id" UUID;
ALTER TABLE "endpoint_replicas" ADD CONSTRAINT "endpoint_replicas_reservation_id_fkey" FOREIGN KEY ("reservation_id") REFERENCES "reservations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- The reservation (if any) holding a node at a moment, and whether a placement on these nodes for
-- this tenant runs inside one: the one answer the placement records below are checked against.
CREATE FUNCTION "covering_reservation"(p_tenant UUID, p_nodes UUID[]) RETURNS UUID LANGUAGE plpgsql STABLE AS $$
DECLARE
    held UUID[];
    inside INTEGER;
BEGIN
    SELECT array_agg(DISTINCT rn.reservation_id), count(DISTINCT rn.node_id) INTO held, inside
      FROM reservation_nodes rn
     WHERE rn.node_id = ANY(p_nodes) AND rn.tenant_id = p_tenant AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now();
    IF inside = 0 THEN RETURN NULL; END IF;
    IF cardinality(held) > 1 OR inside <> (SELECT count(DISTINCT x) FROM unnest(p_nodes) x) THEN
        RAISE EXCEPTION 'a placement may not mix nodes of a reservation with other nodes' USING ERRCODE = '23514';
    END IF;
    RETURN held[1];
END $$;

-- A placement records the reservation it runs inside, exactly the one that holds its nodes now.
CREATE FUNCTION "job_placements_reservation_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tenant UUID;
BEGIN
    SELECT "tenant_id" INTO tenant FROM "jobs" WHERE "id" = NEW."job_id";
    IF NEW."reservation_id" IS DISTINCT FROM "covering_reservation"(tenant, NEW."node_ids") THEN
        RAISE EXCEPTION 'placement of job % names reservation %, but its nodes are held by %', NEW."job_id", NEW."reservation_id", "covering_reservation"(tenant, NEW."node_ids") USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "job_placements_reservation_check" BEFORE INSERT ON "job_placements"
    FOR EACH ROW EXECUTE FUNCTION "job_placements_reservation_check"();

CREATE FUNCTION "endpoint_replicas_reservation_check"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."reservation_id" IS DISTINCT FROM "covering_reservation"(NEW."tenant_id", ARRAY[NEW."node_id"]) THEN
        RAISE EXCEPTION 'replica % names reservation %, but its node is held by %', NEW."id", NEW."reservation_id", "covering_reservation"(NEW."tenant_id", ARRAY[NEW."node_id"]) USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "endpoint_replicas_reservation_check" BEFORE INSERT ON "endpoint_replicas"
    FOR EACH ROW WHEN (NEW."status" <> 'stopped') EXECUTE FUNCTION "endpoint_replicas_reservation_check"();

-- New allocations (a job starting, a replica placed) never go to a node that another tenant's
-- reservation holds now, nor to a node a reservation books before the work's declared end (work
-- without one runs until it ends); work that names its reservation goes only to that reservation's
-- nodes, while it holds them. Checked once per statement over the rows it changed, beside the
-- allocation guards of the jobs, node-execution and endpoints migrations (which stay as they are).
CREATE FUNCTION "gpus_reservation_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad RECORD;
BEGIN
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
CREATE TRIGGER "gpus_reservation_guard" AFTER UPDATE ON "gpus"
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "gpus_reservation_guard"();

-- The other side of the same promise: a node is booked only while it is in service with all of its
-- GPUs healthy and of the reservation's type, and never over work that is not the reservation's
-- own and would still run at its start. The node's GPU rows are locked first: allocations write
-- those rows, so a booking and an allocation of one node are serialised and each sees the other.
-- Refusals use the exclusion error code: to the booking code, the node is simply not free.
CREATE FUNCTION "reservation_nodes_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
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
    IF FOUND THEN
        RAISE EXCEPTION 'node % runs work (% %) that would still run at % and is not this reservation''s', NEW."node_id",
            CASE WHEN bad.job_id IS NOT NULL THEN 'job' ELSE 'replica' END, COALESCE(bad.job_id, bad.replica_id), NEW."starts_at" USING ERRCODE = '23P01';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "reservation_nodes_guard" BEFORE INSERT OR UPDATE OF "starts_at", "ends_at", "live", "node_id" ON "reservation_nodes"
    FOR EACH ROW EXECUTE FUNCTION "reservation_nodes_guard"();

-- GPUs each tenant holds, now counting reservations: the GPUs of the nodes its reservations hold at
-- this moment count, whether used or not, and its work on those nodes is inside them (not counted
-- twice). Work outside reservations counts as before. Quotas, the scheduler and the tenant pages
-- share this one definition.
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
        SELECT rn.tenant_id, rn.gpu_count FROM reservation_nodes rn
         WHERE rn.tenant_id = ANY(p_tenants) AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now()
    ) x GROUP BY x.tenant_id
$$;

-- Billing. A reservation's holdings are billed per second for their whole window, used or not, as
-- usage events of a subject of their own; work running inside a reservation is recorded at rate 0
-- (covered_by_reservation_id): its GPU time is what the reservation already pays for.
ALTER TABLE "usage_events" ADD COLUMN "reservation_id" UUID;
ALTER TABLE "usage_events" ADD COLUMN "reservation_node_id" UUID;
ALTER TABLE "usage_events" ADD COLUMN "covered_by_reservation_id" UUID;
ALTER TABLE "usage_events" DROP CONSTRAINT "usage_events_subject_check";
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_subject_check" CHECK (
    ("job_id" IS NOT NULL AND "replica_id" IS NULL AND "endpoint_id" IS NULL AND "reservation_node_id" IS NULL AND "reservation_id" IS NULL)
 OR ("job_id" IS NULL AND "replica_id" IS NOT NULL AND "endpoint_id" IS NOT NULL AND "reservation_node_id" IS NULL AND "reservation_id" IS NULL)
 OR ("job_id" IS NULL AND "replica_id" IS NULL AND "endpoint_id" IS NULL AND "reservation_node_id" IS NOT NULL AND "reservation_id" IS NOT NULL));
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_covered_check" CHECK ("covered_by_reservation_id" IS NULL OR ("reservation_id" IS NULL AND "amount_cents" = 0 AND "cents_per_hour" = 0));
-- no second of a held node is billed twice, whatever path wrote it
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_reservation_no_overlap" EXCLUDE USING gist ("reservation_node_id" WITH =, tstzrange("started_at", "ended_at", '[)') WITH &&);
CREATE UNIQUE INDEX "usage_events_reservation_final_key" ON "usage_events"("reservation_node_id") WHERE "kind" = 'final';
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_reservation_node_fkey" FOREIGN KEY ("reservation_node_id", "reservation_id") REFERENCES "reservation_nodes"("id", "reservation_id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_covered_by_reservation_fkey" FOREIGN KEY ("covered_by_reservation_id") REFERENCES "reservations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "invoice_lines" ADD COLUMN "reservation_id" UUID;
ALTER TABLE "invoice_lines" DROP CONSTRAINT "invoice_lines_subject_check";
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_subject_check" CHECK (num_nonnulls("job_id", "endpoint_id", "reservation_id") = 1);
CREATE UNIQUE INDEX "invoice_lines_invoice_id_reservation_id_key" ON "invoice_lines"("invoice_id", "reservation_id");
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_reservation_id_fkey" FOREIGN KEY ("reservation_id") REFERENCES "reservations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- One segment of billable GPU time for a job run, a replica or a reservation's holding: from where
-- the subject's last segment ended (or its start) to p_end, at the rate in force when the segment
-- starts (0 for work inside a reservation); prepaid tenants are charged in the same statement.
-- Rounding as before: gpu_seconds = round(seconds × GPUs); amount = round(gpu_seconds ×
-- cents_per_hour / 3600), half up, once per segment.
CREATE FUNCTION "bill_segment"(p_job UUID, p_replica UUID, p_endpoint UUID, p_holding UUID, p_reservation UUID, p_tenant UUID, p_attempt INTEGER,
                               p_gpu_type TEXT, p_gpu_count INTEGER, p_started TIMESTAMPTZ, p_kind TEXT, p_end TIMESTAMPTZ) RETURNS UUID LANGUAGE plpgsql AS $$
DECLARE
    last_end TIMESTAMPTZ;
    seg_start TIMESTAMPTZ;
    seg_end TIMESTAMPTZ;
    rate INTEGER;
    mode TEXT;
    secs BIGINT;
    amount BIGINT;
    covered UUID;
    ev UUID;
BEGIN
    IF p_started IS NULL THEN RETURN NULL; END IF;
    IF p_job IS NOT NULL THEN
        SELECT max("ended_at") INTO last_end FROM "usage_events" WHERE "job_id" = p_job AND "attempt" = p_attempt;
        SELECT "reservation_id" INTO covered FROM "job_placements" WHERE "job_id" = p_job AND "attempt" = p_attempt;
    ELSIF p_replica IS NOT NULL THEN
        SELECT max("ended_at") INTO last_end FROM "usage_events" WHERE "replica_id" = p_replica;
        SELECT "reservation_id" INTO covered FROM "endpoint_replicas" WHERE "id" = p_replica;
    ELSE
        SELECT max("ended_at") INTO last_end FROM "usage_events" WHERE "reservation_node_id" = p_holding;
    END IF;
    seg_start := GREATEST(p_started, COALESCE(last_end, p_started));
    -- an accrual up to a time already billed has nothing to add
    IF p_kind = 'accrual' AND p_end <= seg_start THEN RETURN NULL; END IF;
    seg_end := date_trunc('milliseconds', GREATEST(p_end, seg_start));
    SELECT "cents_per_hour" INTO rate FROM "gpu_rates"
     WHERE "gpu_type" IN (p_gpu_type, '*') AND "effective_from" <= seg_start
     ORDER BY ("gpu_type" = '*'), "effective_from" DESC LIMIT 1;
    rate := CASE WHEN covered IS NOT NULL THEN 0 ELSE COALESCE(rate, 0) END;
    SELECT "billing_mode" INTO mode FROM "tenants" WHERE "id" = p_tenant;
    secs := round(extract(epoch FROM seg_end - seg_start) * p_gpu_count);
    amount := round(secs::numeric * rate / 3600);
    INSERT INTO "usage_events" ("tenant_id", "job_id", "replica_id", "endpoint_id", "reservation_node_id", "reservation_id", "covered_by_reservation_id",
                                "attempt", "kind", "settlement", "gpu_type", "gpu_count", "started_at", "ended_at", "gpu_seconds", "cents_per_hour", "amount_cents")
    VALUES (p_tenant, p_job, p_replica, p_endpoint, p_holding, p_reservation, covered, p_attempt, p_kind, mode, p_gpu_type, p_gpu_count,
            seg_start, seg_end, secs, rate, amount)
    RETURNING "id" INTO ev;
    IF mode = 'prepaid' AND amount > 0 THEN
        INSERT INTO "ledger_entries" ("tenant_id", "kind", "amount_cents", "usage_event_id", "description", "created_by")
        VALUES (p_tenant, 'charge', -amount, ev, p_gpu_count || ' × ' || p_gpu_type || ', ' || secs || ' GPU-seconds'
                || CASE WHEN p_replica IS NOT NULL THEN ' (endpoint replica)' WHEN p_holding IS NOT NULL THEN ' (reserved node)' ELSE '' END, 'meter');
    END IF;
    RETURN ev;
END $$;

-- The earlier signature stays, for jobs and replicas, as a call of the one above.
CREATE OR REPLACE FUNCTION "bill_segment"(p_job UUID, p_replica UUID, p_endpoint UUID, p_tenant UUID, p_attempt INTEGER, p_gpu_type TEXT,
                                          p_gpu_count INTEGER, p_started TIMESTAMPTZ, p_kind TEXT, p_end TIMESTAMPTZ) RETURNS UUID LANGUAGE sql AS $$
    SELECT "bill_segment"(p_job, p_replica, p_endpoint, NULL::uuid, NULL::uuid, p_tenant, p_attempt, p_gpu_type, p_gpu_count, p_started, p_kind, p_end)
$$;

-- A holding's segment, never past its window's end (a future holding accrues nothing yet).
CREATE FUNCTION "bill_reservation_segment"(p_holding UUID, p_kind TEXT, p_end TIMESTAMPTZ) RETURNS UUID LANGUAGE sql AS $$
    SELECT "bill_segment"(NULL::uuid, NULL::uuid, NULL::uuid, h.id, h.reservation_id, h.tenant_id, 1, r.gpu_type, h.gpu_count, h.starts_at, p_kind, LEAST(p_end, h.ends_at))
      FROM "reservation_nodes" h JOIN "reservations" r ON r.id = h.reservation_id
     WHERE h.id = p_holding AND h.live AND (p_kind = 'final' OR p_end > h.starts_at)
$$;

-- A holding that closes produces its final usage event in the same transaction, whatever closed it.
CREATE FUNCTION "reservation_nodes_bill_close"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "bill_reservation_segment"(NEW."id", 'final', NEW."ends_at");
    RETURN NULL;
END $$;
CREATE TRIGGER "reservation_nodes_bill_close" AFTER UPDATE OF "closed_at" ON "reservation_nodes"
    FOR EACH ROW WHEN (OLD."closed_at" IS NULL AND NEW."closed_at" IS NOT NULL AND NEW."live") EXECUTE FUNCTION "reservation_nodes_bill_close"();

-- Tenants hear about their reservations: a degraded reservation is an alert of its own.
-- (The type and subject lists are extended in place, so lists other migrations extend stay whole.)
DO $$
DECLARE
    c RECORD;
BEGIN
    FOR c IN SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
              WHERE conrelid = '"alert_events"'::regclass AND conname IN ('alert_events_type_check', 'alert_events_rule_check', 'alert_events_subject_check')
    LOOP
        IF c.conname = 'alert_events_subject_check' AND position('''reservation''' IN c.def) = 0 THEN
            EXECUTE format('ALTER TABLE "alert_events" DROP CONSTRAINT %I, ADD CONSTRAINT %I %s', c.conname, c.conname, replace(c.def, 'ARRAY[', 'ARRAY[''reservation''::text, '));
        ELSIF c.conname <> 'alert_events_subject_check' AND position('''reservation_degraded''' IN c.def) = 0 THEN
            EXECUTE format('ALTER TABLE "alert_events" DROP CONSTRAINT %I, ADD CONSTRAINT %I %s', c.conname, c.conname, replace(c.def, 'ARRAY[', 'ARRAY[''reservation_degraded''::text, '));
        END IF;
    END LOOP;
END $$;

-- The read-only public API (npm run public-api) reads only these views, through a role that can
-- SELECT them and nothing else. They carry no tenant, job, hostname or key: the fleet's shape, its
-- bookings as bare windows, the GPUs busy on each node and until when, and redacted remediations.
CREATE SCHEMA "public_api";
REVOKE ALL ON SCHEMA "public_api" FROM PUBLIC;

-- (one grouped pass over the GPUs: at 10,000 GPUs a per-node subquery cost ten times as much)
CREATE VIEW "public_api"."nodes" AS
    SELECT n.id AS node_id, n.cluster_id, c.name AS cluster_name, c.region, n.pod, n.rack, n.status, g.gpu_type, g.gpus, g.healthy
      FROM (SELECT x.node_id, min(x.gpu_type) AS gpu_type, count(*)::int AS gpus, count(*) FILTER (WHERE x.status = 'available')::int AS healthy
              FROM gpus x WHERE x.missing_since IS NULL GROUP BY x.node_id) g
      JOIN nodes n ON n.id = g.node_id JOIN clusters c ON c.id = n.cluster_id;

CREATE VIEW "public_api"."node_bookings" AS
    SELECT node_id, starts_at, ends_at FROM reservation_nodes WHERE live AND ends_at > now();

-- busy_until: when the work's declared duration ends; NULL when it declared none (a replica, a job without duration_s)
CREATE VIEW "public_api"."node_work" AS
    SELECT g.node_id, CASE WHEN j.duration_s IS NOT NULL THEN j.started_at + make_interval(secs => j.duration_s) END AS busy_until, count(*)::int AS gpus
      FROM gpus g LEFT JOIN jobs j ON j.id = g.allocated_job_id
     WHERE g.allocated_job_id IS NOT NULL OR g.allocated_replica_id IS NOT NULL
     GROUP BY 1, 2;

CREATE VIEW "public_api"."remediations" AS
    SELECT r.id, r.created_at, c.name AS cluster_name, n.pod, r.action, r.outcome,
           CASE WHEN r.cause LIKE 'fatal_xid:%' THEN 'GPU hardware fault' WHEN r.cause = 'overheating' THEN 'overheating' ELSE 'hardware fault' END AS cause
      FROM remediations r JOIN nodes n ON n.id = r.node_id JOIN clusters c ON c.id = n.cluster_id;

-- The role exists once per server (roles are not per database); creating it needs CREATEROLE. Where
-- the migrating user lacks it, an administrator creates it (see README) and this grants on a
-- later run of the same statements by hand; the listener refuses to start without it.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'gpuforge_public_reader')
       AND (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) THEN
        BEGIN
            CREATE ROLE "gpuforge_public_reader" NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL; -- another database's migration created it a moment ago
        END;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'gpuforge_public_reader') THEN
        EXECUTE 'GRANT USAGE ON SCHEMA "public_api" TO "gpuforge_public_reader"';
        EXECUTE 'GRANT SELECT ON ALL TABLES IN SCHEMA "public_api" TO "gpuforge_public_reader"';
    ELSE
        RAISE NOTICE 'role gpuforge_public_reader does not exist and % may not create it: the public API will not start until an administrator creates it', current_user;
    END IF;
END $$;
