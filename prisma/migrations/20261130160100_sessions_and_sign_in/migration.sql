-- Sessions end when their user says so: every session token carries the user's session version,
-- checked on every request; changing a password, signing out, disabling or demoting a user bumps it.
ALTER TABLE "users" ADD COLUMN "session_version" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "users" ADD CONSTRAINT "users_session_version_check" CHECK ("session_version" >= 0);

-- Sign-in throttling shared by every app instance: one row per address (`ip:…`) and per account
-- (`email:…`). An attempt is counted here, under the row's lock, before the password is hashed, so
-- parallel attempts cannot slip past; past a free allowance each failure doubles the wait.
CREATE TABLE "sign_in_throttles" (
    "key"             TEXT NOT NULL,
    "failures"        INTEGER NOT NULL DEFAULT 0,
    "blocked_until"   TIMESTAMPTZ(3),
    "last_failure_at" TIMESTAMPTZ(3),
    CONSTRAINT "sign_in_throttles_pkey" PRIMARY KEY ("key"),
    CONSTRAINT "sign_in_throttles_key_check" CHECK ("key" ~ '^(ip|email):.' AND length("key") <= 320),
    CONSTRAINT "sign_in_throttles_failures_check" CHECK ("failures" >= 0)
);
CREATE INDEX "sign_in_throttles_last_failure_at_idx" ON "sign_in_throttles"("last_failure_at");
