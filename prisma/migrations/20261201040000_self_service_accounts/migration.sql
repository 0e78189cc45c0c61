-- Self-service accounts (issue 29): sign-up with a verified email, password reset, TOTP two-factor
-- sign-in with recovery codes, sign-in history, account mail through the notification outbox,
-- card deposits through Stripe Checkout, and prepaid limits that hold.

-- Users: an address is verified when its owner followed a link we mailed (sign-ups), or when an
-- operator or admin created the user (they vouch for it: the default). Two-factor secrets are
-- stored sealed (AES-256-GCM, lib/auth/account-secrets.ts), never in the clear; a pending secret
-- is one shown for enrolment and not yet confirmed with a code. The last accepted time step makes
-- a code single-use (RFC 6238 §5.2).
ALTER TABLE "users"
    ADD COLUMN "email_verified_at" TIMESTAMPTZ(3) DEFAULT CURRENT_TIMESTAMP,
    ADD COLUMN "totp_secret_ciphertext" TEXT,
    ADD COLUMN "totp_enabled_at" TIMESTAMPTZ(3),
    ADD COLUMN "totp_last_step" BIGINT,
    ADD COLUMN "totp_pending_ciphertext" TEXT,
    ADD COLUMN "totp_pending_at" TIMESTAMPTZ(3),
    ADD CONSTRAINT "users_totp_check" CHECK (("totp_enabled_at" IS NULL) = ("totp_secret_ciphertext" IS NULL)),
    ADD CONSTRAINT "users_totp_pending_check" CHECK (("totp_pending_at" IS NULL) = ("totp_pending_ciphertext" IS NULL)),
    ADD CONSTRAINT "users_totp_sealed_check" CHECK (
        ("totp_secret_ciphertext" IS NULL OR "totp_secret_ciphertext" ~ '^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$')
        AND ("totp_pending_ciphertext" IS NULL OR "totp_pending_ciphertext" ~ '^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$'));
UPDATE "users" SET "email_verified_at" = "created_at";

-- Recovery codes: shown once, stored as SHA-256 (they are long random strings), each usable once.
CREATE TABLE "user_recovery_codes" (
    "id"         BIGSERIAL NOT NULL,
    "user_id"    UUID NOT NULL,
    "code_hash"  TEXT NOT NULL,
    "used_at"    TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "user_recovery_codes_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "user_recovery_codes_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "user_recovery_codes_hash_check" CHECK ("code_hash" ~ '^[0-9a-f]{64}$'),
    CONSTRAINT "user_recovery_codes_user_hash_key" UNIQUE ("user_id", "code_hash")
);

-- Links mailed to a user (verify an address, reset a password, discard a sign-up): the token
-- travels only in the mail; here only its SHA-256 is kept. Single use: consuming one sets used_at
-- in the same statement that checks it is unused and unexpired.
CREATE TABLE "account_tokens" (
    "id"         UUID NOT NULL DEFAULT gen_random_uuid(),
    "user_id"    UUID NOT NULL,
    "purpose"    TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at"    TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "account_tokens_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "account_tokens_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "account_tokens_purpose_check" CHECK ("purpose" IN ('verify_email', 'reset_password', 'discard_signup')),
    CONSTRAINT "account_tokens_hash_check" CHECK ("token_hash" ~ '^[0-9a-f]{64}$'),
    CONSTRAINT "account_tokens_expiry_check" CHECK ("expires_at" > "created_at"),
    CONSTRAINT "account_tokens_token_hash_key" UNIQUE ("token_hash")
);
CREATE INDEX "account_tokens_user_id_purpose_idx" ON "account_tokens" ("user_id", "purpose");

-- Every sign-in attempt at an existing account: what its owner sees under Account → Sign-ins.
CREATE TABLE "sign_in_events" (
    "id"         BIGSERIAL NOT NULL,
    "user_id"    UUID NOT NULL,
    "outcome"    TEXT NOT NULL,
    "method"     TEXT,
    "address"    TEXT NOT NULL,
    "user_agent" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sign_in_events_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "sign_in_events_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "sign_in_events_outcome_check" CHECK ("outcome" IN ('succeeded', 'wrong_password', 'wrong_code', 'throttled', 'unverified', 'disabled')),
    CONSTRAINT "sign_in_events_method_check" CHECK ("method" IS NULL OR "method" IN ('password', 'totp', 'recovery_code')),
    CONSTRAINT "sign_in_events_succeeded_check" CHECK (("outcome" = 'succeeded') = ("method" IS NOT NULL)),
    CONSTRAINT "sign_in_events_text_check" CHECK (length("address") <= 100 AND (length("user_agent") <= 400))
);
CREATE INDEX "sign_in_events_user_id_id_idx" ON "sign_in_events" ("user_id", "id");
CREATE INDEX "sign_in_events_created_at_idx" ON "sign_in_events" ("created_at");

-- Tenants: where they came from (an operator made them, or a stranger signed up), an unverified
-- sign-up's expiry (cleared when its address is verified), limits an operator raises (NULL: none),
-- and whether the current low-balance episode was announced.
ALTER TABLE "tenants"
    ADD COLUMN "origin" TEXT NOT NULL DEFAULT 'operator',
    ADD COLUMN "signup_expires_at" TIMESTAMPTZ(3),
    ADD COLUMN "max_pods" INTEGER,
    ADD COLUMN "max_reservation_hours" INTEGER,
    ADD COLUMN "max_reservations" INTEGER,
    ADD COLUMN "low_balance_warned_at" TIMESTAMPTZ(3),
    ADD CONSTRAINT "tenants_origin_check" CHECK ("origin" IN ('operator', 'signup')),
    ADD CONSTRAINT "tenants_signup_expiry_check" CHECK ("signup_expires_at" IS NULL OR "origin" = 'signup'),
    ADD CONSTRAINT "tenants_max_pods_check" CHECK ("max_pods" IS NULL OR "max_pods" >= 0),
    ADD CONSTRAINT "tenants_max_reservation_hours_check" CHECK ("max_reservation_hours" IS NULL OR "max_reservation_hours" > 0),
    ADD CONSTRAINT "tenants_max_reservations_check" CHECK ("max_reservations" IS NULL OR "max_reservations" >= 0);
CREATE INDEX "tenants_signup_expires_at_idx" ON "tenants" ("signup_expires_at") WHERE "signup_expires_at" IS NOT NULL;

-- Card deposits: one row per Stripe Checkout Session a tenant opened to add funds. The webhook
-- credits the tenant recorded here (never one named in an event's metadata), at most once (the
-- unique index on ledger_entries below), and only for the amount and currency recorded here.
CREATE TABLE "card_deposits" (
    "id"                    UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id"             UUID NOT NULL,
    "amount_cents"          BIGINT NOT NULL,
    "currency"              TEXT NOT NULL,
    "status"                TEXT NOT NULL DEFAULT 'open',
    "stripe_session_id"     TEXT,
    "checkout_url"          TEXT,
    "stripe_payment_intent" TEXT,
    "refunded_cents"        BIGINT NOT NULL DEFAULT 0,
    "failed_attempts"       INTEGER NOT NULL DEFAULT 0,
    "failure_message"       TEXT,
    "created_by"            TEXT NOT NULL,
    "created_at"            TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "paid_at"               TIMESTAMPTZ(3),
    "closed_at"             TIMESTAMPTZ(3),
    "updated_at"            TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "card_deposits_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "card_deposits_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "card_deposits_amount_check" CHECK ("amount_cents" > 0),
    CONSTRAINT "card_deposits_currency_check" CHECK ("currency" ~ '^[a-z]{3}$'),
    CONSTRAINT "card_deposits_status_check" CHECK ("status" IN ('open', 'processing', 'paid', 'expired', 'failed')),
    CONSTRAINT "card_deposits_paid_check" CHECK (("status" = 'paid') = ("paid_at" IS NOT NULL)),
    CONSTRAINT "card_deposits_closed_check" CHECK (("status" IN ('expired', 'failed')) = ("closed_at" IS NOT NULL)),
    CONSTRAINT "card_deposits_refund_check" CHECK ("refunded_cents" >= 0 AND "refunded_cents" <= "amount_cents" AND ("refunded_cents" = 0 OR "status" = 'paid')),
    CONSTRAINT "card_deposits_failed_attempts_check" CHECK ("failed_attempts" >= 0),
    CONSTRAINT "card_deposits_stripe_session_id_key" UNIQUE ("stripe_session_id"),
    CONSTRAINT "card_deposits_stripe_payment_intent_key" UNIQUE ("stripe_payment_intent")
);
CREATE INDEX "card_deposits_tenant_id_created_at_idx" ON "card_deposits" ("tenant_id", "created_at");

-- Reservations of prepaid tenants are paid for their whole window when booked (or refused): the
-- amount charged, NULL for reservations settled as they run (invoiced tenants).
ALTER TABLE "reservations"
    ADD COLUMN "prepaid_cents" BIGINT,
    ADD CONSTRAINT "reservations_prepaid_check" CHECK ("prepaid_cents" IS NULL OR "prepaid_cents" >= 0);

-- The ledger learns three kinds: a card refund made in Stripe (a debit tied to its deposit), a
-- reservation's up-front payment and the part returned when it ends early. A card deposit is
-- credited at most once, whatever the webhook delivers.
ALTER TABLE "ledger_entries"
    ADD COLUMN "card_deposit_id" UUID,
    ADD COLUMN "reservation_id" UUID,
    ADD CONSTRAINT "ledger_entries_card_deposit_id_fkey" FOREIGN KEY ("card_deposit_id") REFERENCES "card_deposits"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    ADD CONSTRAINT "ledger_entries_reservation_id_fkey" FOREIGN KEY ("reservation_id") REFERENCES "reservations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_kind_check";
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_kind_check" CHECK (
    ("kind" = 'deposit' AND "amount_cents" > 0)
    OR ("kind" = 'charge' AND "amount_cents" < 0 AND "usage_event_id" IS NOT NULL)
    OR ("kind" = 'invoice_payment' AND "amount_cents" < 0 AND "invoice_id" IS NOT NULL)
    OR ("kind" = 'refund' AND "amount_cents" > 0 AND "invoice_id" IS NOT NULL AND "usage_event_id" IS NULL)
    OR ("kind" = 'card_refund' AND "amount_cents" < 0 AND "card_deposit_id" IS NOT NULL)
    OR ("kind" = 'reservation' AND "amount_cents" < 0 AND "reservation_id" IS NOT NULL)
    OR ("kind" = 'reservation_return' AND "amount_cents" > 0 AND "reservation_id" IS NOT NULL));
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_links_check" CHECK (
    ("card_deposit_id" IS NULL OR "kind" = 'deposit' OR "kind" = 'card_refund')
    AND ("reservation_id" IS NULL OR "kind" = 'reservation' OR "kind" = 'reservation_return'));
CREATE UNIQUE INDEX "ledger_entries_card_deposit_credit_key" ON "ledger_entries" ("card_deposit_id") WHERE "kind" = 'deposit';
CREATE INDEX "ledger_entries_reservation_id_idx" ON "ledger_entries" ("reservation_id") WHERE "reservation_id" IS NOT NULL;

-- A reservation paid up front is not charged again as it runs: its segments are still recorded
-- as usage (what ran, at what rate), but the meter's per-segment charges for its reserved nodes
-- are not written to the ledger. A new trigger rather than a change to bill_segment, which other
-- work redefines.
CREATE FUNCTION "ledger_entries_skip_prepaid_reservations"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."kind" = 'charge' AND EXISTS (
        SELECT 1 FROM "usage_events" u JOIN "reservations" r ON r."id" = u."reservation_id"
         WHERE u."id" = NEW."usage_event_id" AND u."reservation_node_id" IS NOT NULL AND r."prepaid_cents" IS NOT NULL) THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "ledger_entries_skip_prepaid_reservations" BEFORE INSERT ON "ledger_entries"
    FOR EACH ROW EXECUTE FUNCTION "ledger_entries_skip_prepaid_reservations"();

-- A tenant's limits hold whichever path writes: at most max_pods pods that are not stopped, failed
-- or terminated; reservations no longer than max_reservation_hours, at most max_reservations live
-- ones at once; and a prepaid tenant's reservations are paid up front. The tenant's row is locked
-- first, so two parallel writers count one after the other.
CREATE FUNCTION "pods_tenant_limit_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    lim INTEGER;
    n INTEGER;
BEGIN
    IF NEW."status" NOT IN ('pending', 'starting', 'running', 'stopping') THEN RETURN NULL; END IF;
    IF TG_OP = 'UPDATE' AND OLD."status" IN ('pending', 'starting', 'running', 'stopping') THEN RETURN NULL; END IF;
    SELECT "max_pods" INTO lim FROM "tenants" WHERE "id" = NEW."tenant_id" FOR UPDATE;
    IF lim IS NULL THEN RETURN NULL; END IF;
    SELECT count(*) INTO n FROM "pods" WHERE "tenant_id" = NEW."tenant_id" AND "status" IN ('pending', 'starting', 'running', 'stopping');
    IF n > lim THEN
        RAISE EXCEPTION 'the tenant may have at most % pods at once', lim USING ERRCODE = '23514', CONSTRAINT = 'pods_tenant_limit';
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER "pods_tenant_limit_check" AFTER INSERT OR UPDATE OF "status" ON "pods"
    FOR EACH ROW EXECUTE FUNCTION "pods_tenant_limit_check"();

CREATE FUNCTION "reservations_tenant_limit_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    t RECORD;
    n INTEGER;
BEGIN
    IF NEW."status" NOT IN ('confirmed', 'active') THEN RETURN NULL; END IF;
    SELECT "billing_mode", "max_reservation_hours", "max_reservations" INTO t FROM "tenants" WHERE "id" = NEW."tenant_id" FOR UPDATE;
    IF TG_OP = 'INSERT' AND t."billing_mode" = 'prepaid' AND NEW."prepaid_cents" IS NULL THEN
        RAISE EXCEPTION 'a prepaid tenant''s reservation is paid up front' USING ERRCODE = '23514', CONSTRAINT = 'reservations_prepaid_up_front';
    END IF;
    IF t."max_reservation_hours" IS NOT NULL AND NEW."ends_at" - NEW."starts_at" > make_interval(hours => t."max_reservation_hours") THEN
        RAISE EXCEPTION 'the tenant''s reservations last at most % hours', t."max_reservation_hours" USING ERRCODE = '23514', CONSTRAINT = 'reservations_tenant_limit';
    END IF;
    IF TG_OP = 'INSERT' AND t."max_reservations" IS NOT NULL THEN
        SELECT count(*) INTO n FROM "reservations"
         WHERE "tenant_id" = NEW."tenant_id" AND "status" IN ('confirmed', 'active') AND "ends_at" > now();
        IF n > t."max_reservations" THEN
            RAISE EXCEPTION 'the tenant may hold at most % reservations at once', t."max_reservations" USING ERRCODE = '23514', CONSTRAINT = 'reservations_tenant_limit';
        END IF;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER "reservations_tenant_limit_check" AFTER INSERT OR UPDATE OF "ends_at" ON "reservations"
    FOR EACH ROW EXECUTE FUNCTION "reservations_tenant_limit_check"();

-- Account mail goes through the notification outbox: kind 'account', what it is about
-- (mail_kind), its recipient (target), the user and tenant it concerns, an HTML body beside the
-- text one, and, for mail carrying a link with a token, the real bodies sealed (the stored text
-- shows the link redacted) until delivered. A dedupe key makes once-only mail (a receipt for a
-- deposit) once-only in the database. Only email or the operators' console carries it: never a
-- chat webhook.
ALTER TABLE "notifications"
    ADD COLUMN "mail_kind" TEXT,
    ADD COLUMN "user_id" UUID,
    ADD COLUMN "tenant_id" UUID,
    ADD COLUMN "body_html" TEXT,
    ADD COLUMN "secret_ciphertext" TEXT,
    ADD COLUMN "dedupe_key" TEXT,
    ADD CONSTRAINT "notifications_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE,
    ADD CONSTRAINT "notifications_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "notifications" DROP CONSTRAINT "notifications_kind_check";
ALTER TABLE "notifications" DROP CONSTRAINT "notifications_subject_check";
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_kind_check" CHECK (
    "kind" IN ('firing', 'resolved', 'demo_request', 'account')
    AND (("kind" = 'demo_request') = ("demo_request_id" IS NOT NULL))
    AND (("kind" = 'account') = ("mail_kind" IS NOT NULL)));
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_subject_check" CHECK (
    num_nonnulls("alert_event_id", "demo_request_id") = CASE WHEN "kind" = 'account' THEN 0 ELSE 1 END);
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_mail_kind_check" CHECK ("mail_kind" IS NULL OR "mail_kind" IN (
    'verify_email', 'signup_exists', 'password_reset', 'password_changed', 'new_sign_in', 'two_factor_changed',
    'deposit_receipt', 'deposit_refunded', 'low_balance'));
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_account_channel_check" CHECK ("kind" <> 'account' OR "channel" IN ('email', 'console'));
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_secret_check" CHECK (
    "secret_ciphertext" IS NULL OR ("kind" = 'account' AND "secret_ciphertext" ~ '^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$'));
CREATE UNIQUE INDEX "notifications_dedupe_key_key" ON "notifications" ("dedupe_key");
CREATE INDEX "notifications_account_target_idx" ON "notifications" ("target", "created_at") WHERE "kind" = 'account';

-- Operators' settings for self-service: whether strangers may sign up, what a sign-up starts
-- with, and who must sign in with a second factor.
ALTER TABLE "platform_settings" DROP CONSTRAINT "platform_settings_key_check";
ALTER TABLE "platform_settings" ADD CONSTRAINT "platform_settings_key_check" CHECK ("key" IN (
    'notifications.smtp_url', 'notifications.email_from', 'notifications.email_to', 'notifications.webhook_url',
    'remediation.cap', 'remediation.window_s', 'billing.bank_details',
    'signup.enabled', 'signup.defaults', 'security.two_factor'));

-- A card payment the webhook cannot apply to a deposit (an unknown session, an amount or tenant
-- that does not match what was recorded) is raised to operators as an alert about that payment.
ALTER TABLE "alert_events" DROP CONSTRAINT "alert_events_subject_check";
ALTER TABLE "alert_events" ADD CONSTRAINT "alert_events_subject_check" CHECK (
    "subject_type" IN ('pod', 'reservation', 'cluster', 'node', 'gpu', 'job', 'endpoint', 'invoice', 'card_deposit'));

-- Second-factor codes are throttled like passwords, with a counter per account of their own.
ALTER TABLE "sign_in_throttles" DROP CONSTRAINT "sign_in_throttles_key_check";
ALTER TABLE "sign_in_throttles" ADD CONSTRAINT "sign_in_throttles_key_check" CHECK ("key" ~ '^(ip|email|pair|2fa):.' AND length("key") <= 320);
