-- Foundation: tenants, users, clusters, API keys and the audit log.
-- Written by hand: Prisma's schema covers columns, keys and indexes; the CHECK constraints
-- and partial indexes below are invariants only the database can hold under concurrency.

CREATE EXTENSION IF NOT EXISTS btree_gist;

CREATE TABLE "tenants" (
    "id"            UUID NOT NULL DEFAULT gen_random_uuid(),
    "name"          TEXT NOT NULL,
    "gpu_quota"     INTEGER NOT NULL,
    "status"        TEXT NOT NULL DEFAULT 'active',
    "billing_email" TEXT,
    "created_at"    TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at"    TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "tenants_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "tenants_gpu_quota_check" CHECK ("gpu_quota" >= 0),
    CONSTRAINT "tenants_status_check" CHECK ("status" IN ('active', 'suspended')),
    CONSTRAINT "tenants_name_check" CHECK (length(btrim("name")) BETWEEN 1 AND 100)
);
CREATE UNIQUE INDEX "tenants_name_key" ON "tenants"("name");

CREATE TABLE "users" (
    "id"            UUID NOT NULL DEFAULT gen_random_uuid(),
    "email"         TEXT NOT NULL,
    "name"          TEXT NOT NULL,
    "password_hash" TEXT NOT NULL,
    "role"          TEXT NOT NULL,
    "tenant_id"     UUID,
    "disabled_at"   TIMESTAMPTZ(3),
    "last_login_at" TIMESTAMPTZ(3),
    "created_at"    TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at"    TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "users_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "users_role_check" CHECK ("role" IN ('operator', 'tenant_admin', 'tenant_member')),
    -- operators belong to no tenant; every tenant user belongs to exactly one
    CONSTRAINT "users_role_tenant_check" CHECK (("role" = 'operator') = ("tenant_id" IS NULL)),
    -- emails are stored lower-cased so the unique index is case-insensitive
    CONSTRAINT "users_email_check" CHECK ("email" = lower("email") AND "email" LIKE '%_@_%')
);
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");
CREATE INDEX "users_tenant_id_idx" ON "users"("tenant_id");
ALTER TABLE "users" ADD CONSTRAINT "users_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "clusters" (
    "id"         UUID NOT NULL DEFAULT gen_random_uuid(),
    "name"       TEXT NOT NULL,
    "region"     TEXT,
    "provider"   TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "clusters_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "clusters_name_check" CHECK (length(btrim("name")) BETWEEN 1 AND 100)
);
CREATE UNIQUE INDEX "clusters_name_key" ON "clusters"("name");

CREATE TABLE "api_keys" (
    "id"                 UUID NOT NULL DEFAULT gen_random_uuid(),
    "name"               TEXT NOT NULL,
    "prefix"             TEXT NOT NULL,
    "key_hash"           TEXT NOT NULL,
    "scope"              TEXT NOT NULL,
    "tenant_id"          UUID,
    "cluster_id"         UUID,
    "created_by_user_id" UUID,
    "last_used_at"       TIMESTAMPTZ(3),
    "revoked_at"         TIMESTAMPTZ(3),
    "created_at"         TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "api_keys_prefix_check" CHECK (length("prefix") = 12 AND "prefix" LIKE 'gf\_%'),
    CONSTRAINT "api_keys_key_hash_check" CHECK ("key_hash" ~ '^[0-9a-f]{64}$'),
    -- a key is bound to exactly what its scope names, nothing else
    CONSTRAINT "api_keys_scope_binding_check" CHECK (
        ("scope" = 'operator' AND "tenant_id" IS NULL AND "cluster_id" IS NULL) OR
        ("scope" = 'tenant'   AND "tenant_id" IS NOT NULL AND "cluster_id" IS NULL) OR
        ("scope" = 'agent'    AND "cluster_id" IS NOT NULL AND "tenant_id" IS NULL)
    )
);
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");
CREATE INDEX "api_keys_tenant_id_idx" ON "api_keys"("tenant_id");
CREATE INDEX "api_keys_cluster_id_idx" ON "api_keys"("cluster_id");
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_cluster_id_fkey"
    FOREIGN KEY ("cluster_id") REFERENCES "clusters"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_created_by_user_id_fkey"
    FOREIGN KEY ("created_by_user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

CREATE TABLE "audit_log" (
    "id"          BIGSERIAL NOT NULL,
    "actor_kind"  TEXT NOT NULL,
    "actor_id"    TEXT,
    "tenant_id"   UUID,
    "action"      TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id"   TEXT,
    "details"     JSONB NOT NULL DEFAULT '{}',
    "request_id"  TEXT,
    "created_at"  TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "audit_log_actor_kind_check" CHECK ("actor_kind" IN ('operator', 'tenant', 'agent', 'system'))
);
CREATE INDEX "audit_log_created_at_idx" ON "audit_log"("created_at");
CREATE INDEX "audit_log_tenant_id_created_at_idx" ON "audit_log"("tenant_id", "created_at");

-- The audit log is append-only: history cannot be rewritten from the application.
CREATE FUNCTION "audit_log_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END;
$$;
CREATE TRIGGER "audit_log_no_update" BEFORE UPDATE ON "audit_log"
    FOR EACH ROW EXECUTE FUNCTION "audit_log_append_only"();
