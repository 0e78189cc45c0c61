-- This installation's id, generated once when it is migrated (review of issue 30): provider
-- instances are launched as gpuforge-<installation>-<instance>, and the reconciler ends strays of
-- its own installation only, so installations sharing a provider account (staging beside
-- production, two regions) never terminate each other's machines. GPUFORGE_INSTALLATION_ID
-- overrides it. One row; the id is what the names carry (4 to 16 lowercase letters and digits).
CREATE TABLE "installation" (
    "installation_id" TEXT NOT NULL,
    CONSTRAINT "installation_pkey" PRIMARY KEY ("installation_id"),
    CONSTRAINT "installation_id_check" CHECK ("installation_id" ~ '^[a-z0-9]{4,16}$')
);
INSERT INTO "installation" ("installation_id") VALUES (substr(md5(gen_random_uuid()::text), 1, 12));
