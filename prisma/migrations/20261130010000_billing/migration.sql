-- Billing: GPU rates with history, usage (one event per run segment, never overlapping), invoices
-- with sequential numbers, the prepaid ledger (append-only; a balance is its sum), Stripe events.
-- Money is integer cents everywhere.

CREATE EXTENSION IF NOT EXISTS btree_gist;

ALTER TABLE "tenants" ADD COLUMN "billing_mode" TEXT NOT NULL DEFAULT 'invoice';
ALTER TABLE "tenants" ADD COLUMN "balance_exhausted_at" TIMESTAMPTZ(3);
ALTER TABLE "tenants" ADD CONSTRAINT "tenants_billing_mode_check" CHECK ("billing_mode" IN ('invoice', 'prepaid'));
ALTER TABLE "tenants" ADD CONSTRAINT "tenants_exhausted_check" CHECK ("billing_mode" = 'prepaid' OR "balance_exhausted_at" IS NULL);

-- A rate applies from its effective_from until the next one of its type; '*' prices any type without its own.
CREATE TABLE "gpu_rates" (
    "id"             UUID NOT NULL DEFAULT gen_random_uuid(),
    "gpu_type"       TEXT NOT NULL,
    "cents_per_hour" INTEGER NOT NULL,
    "effective_from" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_by"     TEXT NOT NULL,
    CONSTRAINT "gpu_rates_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "gpu_rates_cents_check" CHECK ("cents_per_hour" BETWEEN 0 AND 10000000),
    CONSTRAINT "gpu_rates_type_check" CHECK (length("gpu_type") BETWEEN 1 AND 64)
);
CREATE UNIQUE INDEX "gpu_rates_gpu_type_effective_from_key" ON "gpu_rates"("gpu_type", "effective_from");

CREATE TABLE "invoices" (
    "id"                UUID NOT NULL DEFAULT gen_random_uuid(),
    "number"            INTEGER NOT NULL,
    "tenant_id"         UUID NOT NULL,
    "period_start"      TIMESTAMPTZ(3) NOT NULL,
    "period_end"        TIMESTAMPTZ(3) NOT NULL,
    "amount_cents"      BIGINT NOT NULL,
    "status"            TEXT NOT NULL DEFAULT 'pending',
    "payment_method"    TEXT,
    "payment_reference" TEXT,
    "stripe_session_id" TEXT,
    "stripe_url"        TEXT,
    "created_by"        TEXT NOT NULL,
    "created_at"        TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "paid_at"           TIMESTAMPTZ(3),
    "voided_at"         TIMESTAMPTZ(3),
    CONSTRAINT "invoices_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "invoices_number_check" CHECK ("number" > 0),
    CONSTRAINT "invoices_period_check" CHECK ("period_end" > "period_start"),
    CONSTRAINT "invoices_amount_check" CHECK ("amount_cents" > 0),
    CONSTRAINT "invoices_status_check" CHECK ("status" IN ('pending', 'paid', 'void')),
    CONSTRAINT "invoices_paid_check" CHECK (("status" = 'paid') = ("paid_at" IS NOT NULL) AND ("status" = 'paid') = ("payment_method" IS NOT NULL)),
    CONSTRAINT "invoices_void_check" CHECK (("status" = 'void') = ("voided_at" IS NOT NULL)),
    CONSTRAINT "invoices_method_check" CHECK ("payment_method" IS NULL OR "payment_method" IN ('stripe', 'balance', 'bank'))
);
CREATE UNIQUE INDEX "invoices_number_key" ON "invoices"("number");
CREATE UNIQUE INDEX "invoices_stripe_session_id_key" ON "invoices"("stripe_session_id");
-- one live invoice per tenant and period: the monthly run is idempotent
CREATE UNIQUE INDEX "invoices_tenant_period_key" ON "invoices"("tenant_id", "period_start", "period_end") WHERE "status" <> 'void';
CREATE INDEX "invoices_tenant_id_idx" ON "invoices"("tenant_id", "created_at");
CREATE INDEX "invoices_status_idx" ON "invoices"("status", "created_at");
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "usage_events" (
    "id"             UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id"      UUID NOT NULL,
    "job_id"         UUID NOT NULL,
    "attempt"        INTEGER NOT NULL,
    "kind"           TEXT NOT NULL,
    "settlement"     TEXT NOT NULL,
    "gpu_type"       TEXT NOT NULL,
    "gpu_count"      INTEGER NOT NULL,
    "started_at"     TIMESTAMPTZ(3) NOT NULL,
    "ended_at"       TIMESTAMPTZ(3) NOT NULL,
    "gpu_seconds"    BIGINT NOT NULL,
    "cents_per_hour" INTEGER NOT NULL,
    "amount_cents"   BIGINT NOT NULL,
    "invoice_id"     UUID,
    "created_at"     TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "usage_events_pkey" PRIMARY KEY ("id"),
    -- accrual: a running job's elapsed segment; final: the rest of the run when it ended
    CONSTRAINT "usage_events_kind_check" CHECK ("kind" IN ('accrual', 'final')),
    CONSTRAINT "usage_events_settlement_check" CHECK ("settlement" IN ('invoice', 'prepaid')),
    CONSTRAINT "usage_events_span_check" CHECK ("ended_at" >= "started_at" AND "gpu_count" > 0 AND "gpu_seconds" >= 0 AND "amount_cents" >= 0 AND "cents_per_hour" >= 0),
    CONSTRAINT "usage_events_invoice_check" CHECK ("settlement" = 'invoice' OR "invoice_id" IS NULL),
    -- no second of a run is billed twice, whatever path wrote it
    CONSTRAINT "usage_events_no_overlap" EXCLUDE USING gist ("job_id" WITH =, "attempt" WITH =, tstzrange("started_at", "ended_at", '[)') WITH &&)
);
CREATE UNIQUE INDEX "usage_events_final_key" ON "usage_events"("job_id", "attempt") WHERE "kind" = 'final';
CREATE INDEX "usage_events_tenant_id_idx" ON "usage_events"("tenant_id", "ended_at");
CREATE INDEX "usage_events_uninvoiced_idx" ON "usage_events"("tenant_id", "ended_at") WHERE "invoice_id" IS NULL AND "settlement" = 'invoice';
CREATE INDEX "usage_events_invoice_id_idx" ON "usage_events"("invoice_id");
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_invoice_id_fkey" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "invoice_lines" (
    "id"           UUID NOT NULL DEFAULT gen_random_uuid(),
    "invoice_id"   UUID NOT NULL,
    "gpu_type"     TEXT NOT NULL,
    "job_id"       UUID NOT NULL,
    "description"  TEXT NOT NULL,
    "gpu_seconds"  BIGINT NOT NULL,
    "amount_cents" BIGINT NOT NULL,
    CONSTRAINT "invoice_lines_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "invoice_lines_amount_check" CHECK ("amount_cents" >= 0 AND "gpu_seconds" >= 0)
);
CREATE UNIQUE INDEX "invoice_lines_invoice_id_job_id_key" ON "invoice_lines"("invoice_id", "job_id");
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_invoice_id_fkey" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- An invoice's total is the sum of its lines, checked when its transaction commits.
CREATE FUNCTION "invoices_total_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    inv UUID;
    total BIGINT;
    lines BIGINT;
BEGIN
    IF TG_TABLE_NAME = 'invoices' THEN inv := NEW."id"; ELSE inv := NEW."invoice_id"; END IF;
    SELECT "amount_cents" INTO total FROM "invoices" WHERE "id" = inv;
    IF total IS NULL THEN RETURN NULL; END IF;
    SELECT COALESCE(sum("amount_cents"), 0) INTO lines FROM "invoice_lines" WHERE "invoice_id" = inv;
    IF total <> lines THEN
        RAISE EXCEPTION 'invoice % totals % cents but its lines sum to %', inv, total, lines USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER "invoices_total_guard" AFTER INSERT OR UPDATE OF "amount_cents" ON "invoices"
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "invoices_total_check"();
CREATE CONSTRAINT TRIGGER "invoice_lines_total_guard" AFTER INSERT OR UPDATE ON "invoice_lines"
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "invoices_total_check"();

CREATE TABLE "ledger_entries" (
    "id"             BIGSERIAL NOT NULL,
    "tenant_id"      UUID NOT NULL,
    "kind"           TEXT NOT NULL,
    "amount_cents"   BIGINT NOT NULL,
    "usage_event_id" UUID,
    "invoice_id"     UUID,
    "stripe_event_id" TEXT,
    "description"    TEXT NOT NULL,
    "created_by"     TEXT NOT NULL,
    "created_at"     TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("id"),
    -- credits are positive, debits negative; what each kind must point at
    -- a refund credits (part of) a paid invoice back to the balance, and names which invoice
    CONSTRAINT "ledger_entries_kind_check" CHECK (
        ("kind" = 'deposit' AND "amount_cents" > 0)
        OR ("kind" = 'charge' AND "amount_cents" < 0 AND "usage_event_id" IS NOT NULL)
        OR ("kind" = 'invoice_payment' AND "amount_cents" < 0 AND "invoice_id" IS NOT NULL)
        OR ("kind" = 'refund' AND "amount_cents" > 0 AND "invoice_id" IS NOT NULL AND "usage_event_id" IS NULL))
);
CREATE UNIQUE INDEX "ledger_entries_usage_event_id_key" ON "ledger_entries"("usage_event_id");
CREATE INDEX "ledger_entries_invoice_id_idx" ON "ledger_entries"("invoice_id");
CREATE UNIQUE INDEX "ledger_entries_invoice_payment_key" ON "ledger_entries"("invoice_id") WHERE "kind" = 'invoice_payment';
CREATE UNIQUE INDEX "ledger_entries_stripe_event_id_key" ON "ledger_entries"("stripe_event_id");
CREATE INDEX "ledger_entries_tenant_id_idx" ON "ledger_entries"("tenant_id", "id");
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_usage_event_id_fkey" FOREIGN KEY ("usage_event_id") REFERENCES "usage_events"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_invoice_id_fkey" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE FUNCTION "ledger_entries_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger_entries is append-only: correct a balance with a new entry';
END $$;
CREATE TRIGGER "ledger_entries_append_only" BEFORE UPDATE OR DELETE ON "ledger_entries"
    FOR EACH ROW EXECUTE FUNCTION "ledger_entries_append_only"();

CREATE TABLE "stripe_events" (
    "id"           TEXT NOT NULL,
    "type"         TEXT NOT NULL,
    "outcome"      TEXT NOT NULL,
    "received_at"  TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "stripe_events_pkey" PRIMARY KEY ("id")
);

-- Bills one segment of a run: from where its last segment ended (or the run's start) to p_end, at
-- the rate in force when the segment starts; prepaid tenants are charged in the same statement.
-- gpu_seconds = round(seconds × GPUs); amount = round(gpu_seconds × cents_per_hour / 3600), half up,
-- once per segment.
CREATE FUNCTION "bill_usage_segment"(p_job UUID, p_tenant UUID, p_attempt INTEGER, p_gpu_type TEXT, p_gpu_count INTEGER,
                                     p_run_started TIMESTAMPTZ, p_kind TEXT, p_end TIMESTAMPTZ) RETURNS UUID LANGUAGE plpgsql AS $$
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
    IF p_run_started IS NULL THEN RETURN NULL; END IF;
    SELECT max("ended_at") INTO last_end FROM "usage_events" WHERE "job_id" = p_job AND "attempt" = p_attempt;
    seg_start := GREATEST(p_run_started, COALESCE(last_end, p_run_started));
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
    INSERT INTO "usage_events" ("tenant_id", "job_id", "attempt", "kind", "settlement", "gpu_type", "gpu_count", "started_at", "ended_at", "gpu_seconds", "cents_per_hour", "amount_cents")
    VALUES (p_tenant, p_job, p_attempt, p_kind, mode, p_gpu_type, p_gpu_count, seg_start, seg_end, secs, rate, amount)
    RETURNING "id" INTO ev;
    IF mode = 'prepaid' AND amount > 0 THEN
        INSERT INTO "ledger_entries" ("tenant_id", "kind", "amount_cents", "usage_event_id", "description", "created_by")
        VALUES (p_tenant, 'charge', -amount, ev, p_gpu_count || ' × ' || p_gpu_type || ', ' || secs || ' GPU-seconds', 'meter');
    END IF;
    RETURN ev;
END $$;

-- Every run that ends (completed, failed, cancelled, requeued off a lost node) produces its final
-- usage event in the same transaction, whichever code path ended it.
CREATE FUNCTION "jobs_bill_ended_run"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "bill_usage_segment"(OLD."id", OLD."tenant_id", OLD."attempts", OLD."gpu_type", OLD."gpu_count", OLD."started_at", 'final', now());
    RETURN NULL;
END $$;
CREATE TRIGGER "jobs_bill_ended_run" AFTER UPDATE OF "status" ON "jobs"
    FOR EACH ROW WHEN (OLD."status" = 'running' AND NEW."status" <> 'running') EXECUTE FUNCTION "jobs_bill_ended_run"();

-- List prices to start from; operators change them on the billing page (history is kept).
INSERT INTO "gpu_rates" ("gpu_type", "cents_per_hour", "effective_from", "created_by") VALUES
  ('H200', 349, '2026-01-01', 'migration'),
  ('H100', 249, '2026-01-01', 'migration'),
  ('A100', 179, '2026-01-01', 'migration'),
  ('L40S', 99,  '2026-01-01', 'migration'),
  ('L4',   49,  '2026-01-01', 'migration'),
  ('*',    199, '2026-01-01', 'migration');
