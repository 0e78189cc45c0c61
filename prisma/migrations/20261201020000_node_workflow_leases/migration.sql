-- Handover between tenants and provisioning from bare metal (issue 28): the node states they move a
-- node through, the workflows and their steps, and the worker lease with a fencing token that every
-- step's write carries. The lease is the mechanism both the handover (wipe, attestation) and the
-- provisioning (Redfish) workflows hold; lib/fleet/node-lease.ts describes how to use it.

-- 1. Node states. Nothing is placed, started or booked into a node in provisioning, releasing,
-- wiping, inspecting or attestation_failed: the allocation guards of gpus (jobs, replicas, pods) and
-- reservation_nodes already take work and bookings only onto nodes whose status is 'available', so
-- the new states are refused there by the same checks (tests/integration/node-handover-guards).
ALTER TABLE "nodes" DROP CONSTRAINT "nodes_status_check", ADD CONSTRAINT "nodes_status_check" CHECK ("status" IN (
    'registered', 'available', 'draining', 'maintenance', 'quarantined', 'offline',
    'provisioning', 'releasing', 'wiping', 'inspecting', 'attestation_failed'));
ALTER TABLE "nodes" DROP CONSTRAINT "nodes_status_before_offline_check", ADD CONSTRAINT "nodes_status_before_offline_check" CHECK (
    "status_before_offline" IS NULL OR "status_before_offline" IN (
    'registered', 'available', 'draining', 'maintenance', 'quarantined',
    'provisioning', 'releasing', 'wiping', 'inspecting', 'attestation_failed'));

-- A whole-node tenancy ended (or a workflow began) and no handover has passed since: the node goes
-- back into service only through one, never by an operator's "return to service" or a heartbeat.
ALTER TABLE "nodes" ADD COLUMN "handover_due_since" TIMESTAMPTZ(3),
    ADD CONSTRAINT "nodes_handover_due_check" CHECK ("status" <> 'available' OR "handover_due_since" IS NULL);

-- 2. Worker leases. One row per node, created by its first acquisition. `token` is the fencing token:
-- it grows by one with every acquisition (a take-over after expiry, a revocation) and never goes
-- back, so a write carrying a lower token than the row's is from a worker that lost the lease.
CREATE TABLE "node_leases" (
    "node_id"     UUID NOT NULL,
    "token"       BIGINT NOT NULL,
    "purpose"     TEXT NOT NULL,
    -- the workflow the lease serves (node_workflows.id), when it serves one
    "workflow_id" UUID,
    -- who holds it: a worker's own id (process and run), 'revoked' after an operator took it away
    "holder"      TEXT NOT NULL,
    "acquired_at" TIMESTAMPTZ(3) NOT NULL,
    "renewed_at"  TIMESTAMPTZ(3) NOT NULL,
    "expires_at"  TIMESTAMPTZ(3) NOT NULL,
    "released_at" TIMESTAMPTZ(3),
    CONSTRAINT "node_leases_pkey" PRIMARY KEY ("node_id"),
    CONSTRAINT "node_leases_token_check" CHECK ("token" > 0),
    CONSTRAINT "node_leases_purpose_check" CHECK ("purpose" IN ('handover', 'provisioning')),
    CONSTRAINT "node_leases_holder_check" CHECK (length("holder") BETWEEN 1 AND 200),
    CONSTRAINT "node_leases_times_check" CHECK ("renewed_at" >= "acquired_at" AND "expires_at" > "renewed_at")
);
ALTER TABLE "node_leases" ADD CONSTRAINT "node_leases_node_id_fkey"
    FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The token only grows, and a lease changes hands only with a new one: no statement, however
-- written, can hand a lease over under an old token.
CREATE FUNCTION "node_leases_token_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."token" < OLD."token" THEN
        RAISE EXCEPTION 'node % lease token may not go back from % to %', NEW."node_id", OLD."token", NEW."token" USING ERRCODE = '23514';
    END IF;
    IF NEW."token" = OLD."token" AND (NEW."holder" IS DISTINCT FROM OLD."holder" OR NEW."purpose" IS DISTINCT FROM OLD."purpose"
        OR NEW."workflow_id" IS DISTINCT FROM OLD."workflow_id" OR NEW."acquired_at" IS DISTINCT FROM OLD."acquired_at"
        OR (OLD."released_at" IS NOT NULL AND NEW."released_at" IS NULL)) THEN
        RAISE EXCEPTION 'node % lease changes hands only with a new token', NEW."node_id" USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "node_leases_token_guard" BEFORE UPDATE ON "node_leases"
    FOR EACH ROW EXECUTE FUNCTION "node_leases_token_guard"();

-- Acquires the node's lease for a purpose (and workflow) when nobody holds it live: a lease never
-- taken, released, revoked or expired. Answers the new token, or no row when a live lease is held.
-- One statement: concurrent acquirers queue on the row and exactly one of them wins. Times are the
-- clock's at the call (clock_timestamp), not the transaction's start: a lease is about real time.
CREATE FUNCTION "node_lease_acquire"(p_node UUID, p_purpose TEXT, p_workflow UUID, p_holder TEXT, p_ttl_ms INTEGER)
RETURNS TABLE ("token" BIGINT, "expires_at" TIMESTAMPTZ) LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    t TIMESTAMPTZ := clock_timestamp();
BEGIN
    RETURN QUERY
    INSERT INTO "node_leases" AS l ("node_id", "token", "purpose", "workflow_id", "holder", "acquired_at", "renewed_at", "expires_at")
    VALUES (p_node, 1, p_purpose, p_workflow, p_holder, t, t, t + make_interval(secs => p_ttl_ms / 1000.0))
    ON CONFLICT ("node_id") DO UPDATE
       SET "token" = l."token" + 1, "purpose" = EXCLUDED."purpose", "workflow_id" = EXCLUDED."workflow_id", "holder" = EXCLUDED."holder",
           "acquired_at" = t, "renewed_at" = t, "expires_at" = EXCLUDED."expires_at", "released_at" = NULL
     WHERE l."released_at" IS NOT NULL OR l."expires_at" <= t
    RETURNING l."token", l."expires_at";
END $$;

-- Extends a live lease its holder still has (the token is the row's, not released, not expired).
-- No row: the lease was lost, and the worker must stop.
CREATE FUNCTION "node_lease_renew"(p_node UUID, p_token BIGINT, p_ttl_ms INTEGER)
RETURNS TABLE ("expires_at" TIMESTAMPTZ) LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    t TIMESTAMPTZ := clock_timestamp();
BEGIN
    RETURN QUERY
    UPDATE "node_leases" SET "renewed_at" = t, "expires_at" = t + make_interval(secs => p_ttl_ms / 1000.0)
     WHERE "node_id" = p_node AND "token" = p_token AND "released_at" IS NULL AND "expires_at" > t
    RETURNING "expires_at";
END $$;

-- Gives a lease back (the next acquisition needs no wait). False when it was no longer the holder's.
CREATE FUNCTION "node_lease_release"(p_node UUID, p_token BIGINT) RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    UPDATE "node_leases" SET "released_at" = clock_timestamp()
     WHERE "node_id" = p_node AND "token" = p_token AND "released_at" IS NULL;
    RETURN FOUND;
END $$;

-- Takes the lease away from whoever holds it (an operator stopped the workflow): the token moves on,
-- so every later write of the old holder is refused, and the lease is free for the next workflow.
-- Answers the token that was revoked's successor, or NULL when the node never had a lease.
CREATE FUNCTION "node_lease_revoke"(p_node UUID) RETURNS BIGINT LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    t TIMESTAMPTZ := clock_timestamp();
    revoked BIGINT;
BEGIN
    UPDATE "node_leases" SET "token" = "token" + 1, "holder" = 'revoked', "workflow_id" = NULL, "acquired_at" = t,
           "renewed_at" = t, "expires_at" = t + interval '1 millisecond', "released_at" = t
     WHERE "node_id" = p_node
    RETURNING "token" INTO revoked;
    RETURN revoked;
END $$;

-- The fence: a write under token p_token goes ahead only while it is the node's live lease. The
-- lease row is locked FOR SHARE until the writing transaction ends, so a take-over or revocation
-- waits for writes already checked and every write after it sees the new token: writes and
-- hand-overs are ordered, and no write of an old holder lands after a new holder's first.
CREATE FUNCTION "node_lease_fence"(p_node UUID, p_token BIGINT) RETURNS BIGINT LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    l RECORD;
BEGIN
    SELECT "token", "released_at", "expires_at" INTO l FROM "node_leases" WHERE "node_id" = p_node FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'stale lease: node % has no lease (token %)', p_node, p_token USING ERRCODE = 'GF001';
    ELSIF l."token" <> p_token THEN
        RAISE EXCEPTION 'stale lease: token % for node % is not the current one (%)', p_token, p_node, l."token" USING ERRCODE = 'GF001';
    ELSIF l."released_at" IS NOT NULL OR l."expires_at" <= clock_timestamp() THEN
        RAISE EXCEPTION 'stale lease: token % for node % has expired or was given back', p_token, p_node USING ERRCODE = 'GF001';
    END IF;
    RETURN p_token;
END $$;

-- Rows a worker writes carry its token in "lease_token" beside "node_id": this trigger fences every
-- such insert and update inside the statement itself. A row written without a token (NULL) is a
-- person's or the starter's (an operator cancelling a workflow), never a worker's.
CREATE FUNCTION "node_lease_fenced_write"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    row_json JSONB := to_jsonb(NEW);
BEGIN
    -- the triggers fire only WHEN NEW.lease_token IS NOT NULL
    PERFORM "node_lease_fence"((row_json->>'node_id')::uuid, (row_json->>'lease_token')::bigint);
    RETURN NEW;
END $$;

-- 3. Workflows: one handover or provisioning of a node at a time, and the steps it took.
CREATE TABLE "node_workflows" (
    "id"           UUID NOT NULL DEFAULT gen_random_uuid(),
    "node_id"      UUID NOT NULL,
    "kind"         TEXT NOT NULL,
    "status"       TEXT NOT NULL DEFAULT 'running',
    -- why it began: a whole-node tenancy ended, or an operator asked
    "trigger"      TEXT NOT NULL,
    "reason"       TEXT NOT NULL,
    "requested_by" TEXT NOT NULL,
    -- what kind of workflow it is, in its own terms (a handover's mode, a provisioning's image)
    "details"      JSONB NOT NULL DEFAULT '{}',
    -- the token of the worker that last wrote the row (NULL: written by its starter or an operator)
    "lease_token"  BIGINT,
    "outcome"      TEXT,
    "started_at"   TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at"  TIMESTAMPTZ(3),
    "updated_at"   TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "node_workflows_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "node_workflows_id_node_key" UNIQUE ("id", "node_id"),
    CONSTRAINT "node_workflows_kind_check" CHECK ("kind" IN ('handover', 'provisioning')),
    CONSTRAINT "node_workflows_status_check" CHECK ("status" IN ('running', 'succeeded', 'failed', 'cancelled')),
    CONSTRAINT "node_workflows_trigger_check" CHECK ("trigger" IN ('tenancy_ended', 'operator')),
    CONSTRAINT "node_workflows_finished_check" CHECK (("status" = 'running') = ("finished_at" IS NULL) AND ("status" = 'running' OR "outcome" IS NOT NULL))
);
-- one workflow runs on a node at a time, whatever its kind
CREATE UNIQUE INDEX "node_workflows_one_running_key" ON "node_workflows"("node_id") WHERE "status" = 'running';
CREATE INDEX "node_workflows_node_id_started_at_idx" ON "node_workflows"("node_id", "started_at");
ALTER TABLE "node_workflows" ADD CONSTRAINT "node_workflows_node_id_fkey"
    FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "node_leases" ADD CONSTRAINT "node_leases_workflow_id_fkey"
    FOREIGN KEY ("workflow_id") REFERENCES "node_workflows"("id") ON DELETE SET NULL ON UPDATE CASCADE;
CREATE TRIGGER "node_workflows_fenced" BEFORE INSERT OR UPDATE ON "node_workflows"
    FOR EACH ROW WHEN (NEW."lease_token" IS NOT NULL) EXECUTE FUNCTION "node_lease_fenced_write"();

-- A finished workflow is history: it is never reopened or rewritten.
CREATE FUNCTION "node_workflows_finished_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD."status" <> 'running' THEN
        RAISE EXCEPTION 'workflow % is % and cannot change', OLD."id", OLD."status" USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "node_workflows_finished_guard" BEFORE UPDATE ON "node_workflows"
    FOR EACH ROW EXECUTE FUNCTION "node_workflows_finished_guard"();

-- Each step a workflow took, with the token it held: what the node page's timeline shows. A step's
-- details are the step's own (a Redfish request and answer, a wipe report's devices, a verdict id).
CREATE TABLE "node_workflow_steps" (
    "id"          BIGSERIAL NOT NULL,
    "workflow_id" UUID NOT NULL,
    "node_id"     UUID NOT NULL,
    "name"        TEXT NOT NULL,
    "status"      TEXT NOT NULL DEFAULT 'running',
    "lease_token" BIGINT,
    "message"     TEXT,
    "details"     JSONB NOT NULL DEFAULT '{}',
    "started_at"  TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "node_workflow_steps_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "node_workflow_steps_name_check" CHECK ("name" ~ '^[a-z][a-z0-9_.-]{0,63}$'),
    CONSTRAINT "node_workflow_steps_status_check" CHECK ("status" IN ('running', 'succeeded', 'failed', 'skipped')),
    CONSTRAINT "node_workflow_steps_finished_check" CHECK (("status" = 'running') = ("finished_at" IS NULL)),
    CONSTRAINT "node_workflow_steps_message_check" CHECK ("message" IS NULL OR length("message") <= 4000)
);
CREATE INDEX "node_workflow_steps_workflow_id_idx" ON "node_workflow_steps"("workflow_id", "id");
ALTER TABLE "node_workflow_steps" ADD CONSTRAINT "node_workflow_steps_workflow_node_fkey"
    FOREIGN KEY ("workflow_id", "node_id") REFERENCES "node_workflows"("id", "node_id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE TRIGGER "node_workflow_steps_fenced" BEFORE INSERT OR UPDATE ON "node_workflow_steps"
    FOR EACH ROW WHEN (NEW."lease_token" IS NOT NULL) EXECUTE FUNCTION "node_lease_fenced_write"();

-- 4. A node's state changes made by a worker are fenced too: the event row records the token, and
-- the trigger refuses it (and so the transaction that changed the node) when the token is stale.
ALTER TABLE "node_events" ADD COLUMN "lease_token" BIGINT;
CREATE TRIGGER "node_events_fenced" BEFORE INSERT OR UPDATE ON "node_events"
    FOR EACH ROW WHEN (NEW."lease_token" IS NOT NULL) EXECUTE FUNCTION "node_lease_fenced_write"();
