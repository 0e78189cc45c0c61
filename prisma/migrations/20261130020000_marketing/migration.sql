-- The public site: demo requests (an inbox for operators), early-access signups, and first-party
-- page views (no cookies: an anonymous session hash that changes every day).

CREATE TABLE "demo_requests" (
    "id"         UUID NOT NULL DEFAULT gen_random_uuid(),
    "name"       TEXT NOT NULL,
    "email"      TEXT NOT NULL,
    "company"    TEXT,
    "message"    TEXT,
    "status"     TEXT NOT NULL DEFAULT 'new',
    "handled_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "handled_at" TIMESTAMPTZ(3),
    CONSTRAINT "demo_requests_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "demo_requests_status_check" CHECK ("status" IN ('new', 'contacted', 'closed')),
    CONSTRAINT "demo_requests_handled_check" CHECK (("status" = 'new') = ("handled_at" IS NULL)),
    CONSTRAINT "demo_requests_email_check" CHECK ("email" = lower("email") AND length("email") BETWEEN 3 AND 254),
    CONSTRAINT "demo_requests_lengths_check" CHECK (length("name") BETWEEN 1 AND 120 AND length(COALESCE("company", '')) <= 120 AND length(COALESCE("message", '')) <= 2000)
);
CREATE INDEX "demo_requests_created_at_idx" ON "demo_requests"("created_at");

CREATE TABLE "early_access" (
    "id"         UUID NOT NULL DEFAULT gen_random_uuid(),
    "email"      TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "early_access_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "early_access_email_check" CHECK ("email" = lower("email") AND length("email") BETWEEN 3 AND 254)
);
CREATE UNIQUE INDEX "early_access_email_key" ON "early_access"("email");

CREATE TABLE "page_views" (
    "id"            BIGSERIAL NOT NULL,
    "path"          TEXT NOT NULL,
    "referrer_host" TEXT,
    "session_hash"  TEXT NOT NULL,
    "created_at"    TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "page_views_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "page_views_path_check" CHECK (left("path", 1) = '/' AND length("path") <= 300),
    CONSTRAINT "page_views_session_check" CHECK (length("session_hash") = 64)
);
CREATE INDEX "page_views_created_at_idx" ON "page_views" USING brin ("created_at");
CREATE INDEX "page_views_path_idx" ON "page_views"("path", "created_at");

-- A demo request is announced to operators through the same outbox as alerts.
ALTER TABLE "notifications" ALTER COLUMN "alert_event_id" DROP NOT NULL;
ALTER TABLE "notifications" ADD COLUMN "demo_request_id" UUID;
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_subject_check" CHECK (("alert_event_id" IS NULL) <> ("demo_request_id" IS NULL));
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_demo_request_id_fkey" FOREIGN KEY ("demo_request_id") REFERENCES "demo_requests"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE UNIQUE INDEX "notifications_demo_request_id_channel_key" ON "notifications"("demo_request_id", "channel") WHERE "demo_request_id" IS NOT NULL;
ALTER TABLE "notifications" DROP CONSTRAINT "notifications_kind_check";
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_kind_check" CHECK ("kind" IN ('firing', 'resolved', 'demo_request') AND (("kind" = 'demo_request') = ("demo_request_id" IS NOT NULL)));
