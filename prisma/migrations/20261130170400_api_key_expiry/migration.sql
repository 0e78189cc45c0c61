-- A key may carry an expiry date: from then on it authenticates nothing (as if revoked), and the
-- console lists it with the revoked ones. The console proposes an expiry by default; keys without
-- one (NULL) never expire, as before.
ALTER TABLE "api_keys" ADD COLUMN "expires_at" TIMESTAMPTZ(3);
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_expires_at_check" CHECK ("expires_at" IS NULL OR "expires_at" > "created_at");
