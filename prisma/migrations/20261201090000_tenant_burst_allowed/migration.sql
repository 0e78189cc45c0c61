-- Burst spends the operator's money with the providers before it bills the tenant: a tenant's
-- admin may turn it on for its own tenant only where the operator allowed it (review of issue 30).
-- Tenants bursting today were allowed by whoever turned it on; the database refuses burst on
-- without the allowance, whatever path writes it.
ALTER TABLE "tenants"
    ADD COLUMN "burst_allowed" BOOLEAN NOT NULL DEFAULT false;
UPDATE "tenants" SET "burst_allowed" = true WHERE "burst_enabled";
ALTER TABLE "tenants"
    ADD CONSTRAINT "tenants_burst_allowed_check" CHECK (NOT "burst_enabled" OR "burst_allowed");
