-- Burst to GPU providers is a tenant's choice with a price cap (issue 30), and self-service
-- sign-ups inherit the operator's default for it (issue 29): both branches write these columns,
-- so they land first, on their own. Off by default; the cap, when set, is a positive whole number
-- of cents per GPU-hour, and burst cannot be on without one (a tenant never bursts at any price).
ALTER TABLE "tenants"
    ADD COLUMN "burst_enabled" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "burst_max_price_cents_per_gpu_hour" INTEGER,
    ADD CONSTRAINT "tenants_burst_max_price_check" CHECK (
        "burst_max_price_cents_per_gpu_hour" IS NULL OR "burst_max_price_cents_per_gpu_hour" > 0),
    ADD CONSTRAINT "tenants_burst_needs_price_check" CHECK (
        NOT "burst_enabled" OR "burst_max_price_cents_per_gpu_hour" IS NOT NULL);
