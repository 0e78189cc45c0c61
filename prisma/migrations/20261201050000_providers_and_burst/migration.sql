-- Burst to GPU providers (issue 30): offers cached per provider, the operator's GPU-type mapping,
-- every instance we rent (one node of a provider cluster each), every launch attempt, per-provider
-- backoff, and usage on provider capacity carrying the provider, the offer and its cost beside our
-- price. Money is integer cents; "per GPU-hour" prices are per GPU.

-- Offers as the last refresh saw them. gpu_type is ours (through the mapping; null: unmapped, never
-- launched); the price is computed at read time from the markup in force (lib/providers/pricing.ts).
CREATE TABLE "provider_offers" (
    "provider" TEXT NOT NULL,
    "offer_id" TEXT NOT NULL,
    "provider_gpu_type" TEXT NOT NULL,
    "gpu_type" TEXT,
    "gpu_count" INTEGER NOT NULL,
    "region" TEXT NOT NULL,
    "interruptible" BOOLEAN NOT NULL,
    "cost_cents_per_gpu_hour" INTEGER NOT NULL,
    "refreshed_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "provider_offers_pkey" PRIMARY KEY ("provider", "offer_id"),
    CONSTRAINT "provider_offers_provider_check" CHECK ("provider" IN ('runpod', 'lambda', 'vast')),
    CONSTRAINT "provider_offers_values_check" CHECK ("gpu_count" BETWEEN 1 AND 64 AND "cost_cents_per_gpu_hour" > 0)
);
CREATE INDEX "provider_offers_gpu_type_idx" ON "provider_offers" ("gpu_type", "gpu_count");

-- One row per provider: when its offers were last refreshed, and how the last attempt went.
CREATE TABLE "provider_refreshes" (
    "provider" TEXT NOT NULL,
    "refreshed_at" TIMESTAMPTZ(3),
    "attempted_at" TIMESTAMPTZ(3) NOT NULL,
    "offers" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    CONSTRAINT "provider_refreshes_pkey" PRIMARY KEY ("provider"),
    CONSTRAINT "provider_refreshes_provider_check" CHECK ("provider" IN ('runpod', 'lambda', 'vast'))
);

-- The operator's word on what a provider's GPU name is in our vocabulary (over the built-in map).
-- gpu_type null: never use this provider GPU, whatever the built-in map says.
CREATE TABLE "provider_gpu_mappings" (
    "provider" TEXT NOT NULL,
    "provider_gpu_type" TEXT NOT NULL,
    "gpu_type" TEXT,
    "updated_by" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "provider_gpu_mappings_pkey" PRIMARY KEY ("provider", "provider_gpu_type"),
    CONSTRAINT "provider_gpu_mappings_provider_check" CHECK ("provider" IN ('runpod', 'lambda', 'vast')),
    CONSTRAINT "provider_gpu_mappings_type_check" CHECK ("gpu_type" IS NULL OR "gpu_type" ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$')
);

-- Every instance rented from a provider, from the moment we decide to launch it (before the
-- provider is asked: a launch whose answer is lost still has a row, and the reconciler finds the
-- instance by its name, gpuforge-<id>) until it is terminated. It joins as one node of its provider
-- cluster with a key bound to that node; job_id is the one job it is rented for (null: idle).
CREATE TABLE "provider_instances" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "provider" TEXT NOT NULL,
    "region" TEXT NOT NULL,
    "offer_id" TEXT NOT NULL,
    "provider_gpu_type" TEXT NOT NULL,
    "gpu_type" TEXT NOT NULL,
    "gpu_count" INTEGER NOT NULL,
    "interruptible" BOOLEAN NOT NULL,
    "cost_cents_per_gpu_hour" INTEGER NOT NULL,
    "price_cents_per_gpu_hour" INTEGER NOT NULL,
    "cluster_id" UUID NOT NULL,
    "node_id" UUID,
    "api_key_id" UUID,
    "tenant_id" UUID NOT NULL,
    "job_id" UUID,
    "external_id" TEXT,
    "status" TEXT NOT NULL DEFAULT 'launching',
    "failure" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "launched_at" TIMESTAMPTZ(3),
    "registered_at" TIMESTAMPTZ(3),
    "idle_since" TIMESTAMPTZ(3),
    "terminate_requested_at" TIMESTAMPTZ(3),
    "terminated_at" TIMESTAMPTZ(3),
    "provider_status" TEXT,
    "checked_at" TIMESTAMPTZ(3),
    CONSTRAINT "provider_instances_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "provider_instances_provider_check" CHECK ("provider" IN ('runpod', 'lambda', 'vast')),
    CONSTRAINT "provider_instances_status_check" CHECK ("status" IN ('launching', 'booting', 'running', 'terminating', 'terminated', 'failed')),
    CONSTRAINT "provider_instances_values_check" CHECK ("gpu_count" BETWEEN 1 AND 64 AND "cost_cents_per_gpu_hour" > 0 AND "price_cents_per_gpu_hour" >= "cost_cents_per_gpu_hour"),
    -- launched means the provider gave us its id; an instance past launching was launched
    CONSTRAINT "provider_instances_launched_check" CHECK ("status" IN ('launching', 'failed') OR ("external_id" IS NOT NULL AND "launched_at" IS NOT NULL)),
    CONSTRAINT "provider_instances_terminated_check" CHECK (("status" IN ('terminated', 'failed')) = ("terminated_at" IS NOT NULL)),
    CONSTRAINT "provider_instances_cluster_fkey" FOREIGN KEY ("cluster_id") REFERENCES "clusters"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "provider_instances_node_fkey" FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "provider_instances_api_key_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "provider_instances_tenant_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "provider_instances_job_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE SET NULL ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "provider_instances_external_key" ON "provider_instances" ("provider", "external_id");
-- a node is one instance; a job is the dedication of at most one live instance
CREATE UNIQUE INDEX "provider_instances_node_key" ON "provider_instances" ("node_id");
CREATE UNIQUE INDEX "provider_instances_live_job_key" ON "provider_instances" ("job_id") WHERE "status" IN ('launching', 'booting', 'running', 'terminating');
CREATE INDEX "provider_instances_live_idx" ON "provider_instances" ("status") WHERE "status" IN ('launching', 'booting', 'running', 'terminating');
CREATE INDEX "provider_instances_tenant_idx" ON "provider_instances" ("tenant_id", "created_at");

-- Every try to place a job on provider capacity, in order: what was tried and how it ended. The
-- job's timeline (job_events) says the same in words; this is what backoff and the pages read.
CREATE TABLE "burst_attempts" (
    "id" BIGSERIAL NOT NULL,
    "job_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "provider" TEXT,
    "offer_id" TEXT,
    "region" TEXT,
    "instance_id" UUID,
    "price_cents_per_gpu_hour" INTEGER,
    "outcome" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "burst_attempts_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "burst_attempts_outcome_check" CHECK ("outcome" IN ('launched', 'reused', 'registered', 'capacity', 'provider_error', 'rate_limited', 'never_registered', 'interrupted', 'cap_reached', 'no_offer')),
    CONSTRAINT "burst_attempts_job_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "burst_attempts_instance_fkey" FOREIGN KEY ("instance_id") REFERENCES "provider_instances"("id") ON DELETE SET NULL ON UPDATE CASCADE
);
CREATE INDEX "burst_attempts_job_idx" ON "burst_attempts" ("job_id", "id");
CREATE INDEX "burst_attempts_created_idx" ON "burst_attempts" ("created_at");

-- A provider that failed (5xx, timeouts, 429) is left alone until `until`; each failure in a row doubles it.
CREATE TABLE "provider_backoffs" (
    "provider" TEXT NOT NULL,
    "failures" INTEGER NOT NULL,
    "until" TIMESTAMPTZ(3) NOT NULL,
    "last_error" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "provider_backoffs_pkey" PRIMARY KEY ("provider"),
    CONSTRAINT "provider_backoffs_provider_check" CHECK ("provider" IN ('runpod', 'lambda', 'vast')),
    CONSTRAINT "provider_backoffs_failures_check" CHECK ("failures" >= 1)
);

-- Usage on provider capacity: the provider, the offer and what the provider charges for the segment,
-- beside our price (cents_per_hour, amount_cents). All three or none.
ALTER TABLE "usage_events"
    ADD COLUMN "provider" TEXT,
    ADD COLUMN "offer_id" TEXT,
    ADD COLUMN "cost_cents_per_hour" INTEGER,
    ADD COLUMN "cost_cents" BIGINT,
    ADD CONSTRAINT "usage_events_provider_check" CHECK (
        ("provider" IS NULL AND "offer_id" IS NULL AND "cost_cents" IS NULL AND "cost_cents_per_hour" IS NULL)
        OR ("provider" IN ('runpod', 'lambda', 'vast') AND "offer_id" IS NOT NULL AND "cost_cents" >= 0 AND "cost_cents_per_hour" > 0));
CREATE INDEX "usage_events_provider_idx" ON "usage_events" ("provider", "ended_at") WHERE "provider" IS NOT NULL;

-- A job's segment on a provider instance is priced at the instance's price (cost × (1 + markup),
-- fixed when it was rented) instead of the local GPU rate, and records the provider's cost. This
-- runs on every insert, whichever function billed the segment, so no billing path can forget it.
-- The price and cost are per GPU-hour; the instance's GPU count is not the job's (a job may use
-- fewer GPUs than the instance has): the job pays for the GPUs it holds, the cost follows the same.
CREATE FUNCTION "usage_events_provider_price"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    pi RECORD;
BEGIN
    IF NEW."job_id" IS NULL OR NEW."covered_by_reservation_id" IS NOT NULL THEN RETURN NEW; END IF;
    SELECT i."provider", i."offer_id", i."price_cents_per_gpu_hour", i."cost_cents_per_gpu_hour" INTO pi
      FROM "job_placements" p JOIN "provider_instances" i ON i."node_id" = ANY(p."node_ids")
     WHERE p."job_id" = NEW."job_id" AND p."attempt" = NEW."attempt"
     LIMIT 1;
    IF NOT FOUND THEN RETURN NEW; END IF;
    NEW."provider" := pi."provider";
    NEW."offer_id" := pi."offer_id";
    NEW."cents_per_hour" := pi."price_cents_per_gpu_hour";
    NEW."amount_cents" := round(NEW."gpu_seconds"::numeric * pi."price_cents_per_gpu_hour" / 3600);
    NEW."cost_cents_per_hour" := pi."cost_cents_per_gpu_hour";
    NEW."cost_cents" := round(NEW."gpu_seconds"::numeric * pi."cost_cents_per_gpu_hour" / 3600);
    RETURN NEW;
END $$;
CREATE TRIGGER "usage_events_provider_price" BEFORE INSERT ON "usage_events" FOR EACH ROW EXECUTE FUNCTION "usage_events_provider_price"();

-- A prepaid charge is the usage event's amount, whatever the billing function computed before the
-- trigger above repriced the event (the ledger must equal the usage it charges).
CREATE FUNCTION "ledger_entries_charge_follows_usage"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    amount BIGINT;
BEGIN
    IF NEW."usage_event_id" IS NULL OR NEW."kind" <> 'charge' THEN RETURN NEW; END IF;
    SELECT u."amount_cents" INTO amount FROM "usage_events" u WHERE u."id" = NEW."usage_event_id" AND u."provider" IS NOT NULL;
    IF FOUND THEN NEW."amount_cents" := -amount; END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "ledger_entries_charge_follows_usage" BEFORE INSERT ON "ledger_entries" FOR EACH ROW EXECUTE FUNCTION "ledger_entries_charge_follows_usage"();

-- The platform's alerts about burst: a spend cap reached (tenant or provider), an instance the
-- provider runs that nothing of ours owns, an instance that never registered. Added in place, so
-- the types other branches add in the same round stay allowed.
DO $$
DECLARE
    c RECORD;
BEGIN
    FOR c IN SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
              WHERE conrelid = '"alert_events"'::regclass AND conname IN ('alert_events_type_check', 'alert_events_rule_check', 'alert_events_subject_check')
    LOOP
        IF c.conname = 'alert_events_subject_check' THEN
            IF position('''provider''' IN c.def) = 0 THEN
                EXECUTE format('ALTER TABLE "alert_events" DROP CONSTRAINT %I, ADD CONSTRAINT %I %s', c.conname, c.conname,
                               replace(c.def, 'ARRAY[', 'ARRAY[''tenant''::text, ''provider''::text, '));
            END IF;
        ELSIF position('''burst_spend_cap''' IN c.def) = 0 THEN
            EXECUTE format('ALTER TABLE "alert_events" DROP CONSTRAINT %I, ADD CONSTRAINT %I %s', c.conname, c.conname,
                           replace(c.def, 'ARRAY[', 'ARRAY[''burst_spend_cap''::text, ''provider_stray_instance''::text, ''burst_failed''::text, '));
        END IF;
    END LOOP;
END $$;
