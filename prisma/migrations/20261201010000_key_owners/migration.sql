-- Every key acts for someone the database can name (issue 27): a person (owner_user_id) or a
-- service account (service_account_id), exactly one of them. A key made with another key belongs to
-- that key's owner and carries no more than the owner's role; keys made by the platform itself (the
-- command line, the seed, start scripts) belong to a platform service account named after what made
-- them. Service accounts are an explicit kind: an operator or a tenant admin creates one, sees it
-- with its keys, and disables it; keys die with their owner's rights, whichever kind the owner is.
-- Until now a key made with a key recorded no creator, so it survived the disabling or demotion of
-- the person whose key made it; endpoint keys likewise.

CREATE TABLE "service_accounts" (
    "id"                 UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id"          UUID,
    "name"               TEXT NOT NULL,
    "role"               TEXT NOT NULL,
    "description"        TEXT,
    "created_by_user_id" UUID,
    "created_by"         TEXT NOT NULL,
    "disabled_at"        TIMESTAMPTZ(3),
    "created_at"         TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at"         TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "service_accounts_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "service_accounts_name_check" CHECK (length("name") BETWEEN 1 AND 100),
    CONSTRAINT "service_accounts_description_check" CHECK ("description" IS NULL OR length("description") <= 500),
    CONSTRAINT "service_accounts_role_check" CHECK ("role" IN ('operator', 'tenant_admin', 'tenant_member')),
    -- as for users: operators belong to no tenant, tenant roles to exactly one
    CONSTRAINT "service_accounts_role_tenant_check" CHECK (("role" = 'operator') = ("tenant_id" IS NULL))
);
CREATE UNIQUE INDEX "service_accounts_tenant_name_key" ON "service_accounts"("tenant_id", "name") NULLS NOT DISTINCT;
ALTER TABLE "service_accounts" ADD CONSTRAINT "service_accounts_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "service_accounts" ADD CONSTRAINT "service_accounts_created_by_user_id_fkey"
    FOREIGN KEY ("created_by_user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "api_keys" ADD COLUMN "owner_user_id" UUID, ADD COLUMN "service_account_id" UUID;
ALTER TABLE "endpoint_keys" ADD COLUMN "owner_user_id" UUID, ADD COLUMN "service_account_id" UUID;

-- Keys already made: a person's stays theirs; one without a creator (the platform's, or one made
-- with a key) goes to a service account that says so, where an admin sees it and can disable it.
INSERT INTO "service_accounts" ("tenant_id", "name", "role", "created_by", "description")
SELECT DISTINCT x."tenant_id", 'Keys made before owners were recorded', 'tenant_admin', 'migration',
       'Tenant keys and endpoint keys that recorded no creator. Disable this account to revoke them all, or keep it for the scripts that use them.'
  FROM (SELECT "tenant_id" FROM "api_keys" WHERE "created_by_user_id" IS NULL AND "scope" = 'tenant'
        UNION SELECT "tenant_id" FROM "endpoint_keys" WHERE "created_by_user_id" IS NULL) x;
INSERT INTO "service_accounts" ("tenant_id", "name", "role", "created_by", "description")
SELECT NULL, 'Keys made before owners were recorded', 'operator', 'migration',
       'Operator and agent keys that recorded no creator (made on the command line, by the seed, or with another key). Disable this account to revoke them all.'
 WHERE EXISTS (SELECT 1 FROM "api_keys" WHERE "created_by_user_id" IS NULL AND "scope" <> 'tenant');

UPDATE "api_keys" SET "owner_user_id" = "created_by_user_id" WHERE "created_by_user_id" IS NOT NULL;
UPDATE "api_keys" k SET "service_account_id" = s."id"
  FROM "service_accounts" s
 WHERE k."created_by_user_id" IS NULL AND s."created_by" = 'migration'
   AND s."tenant_id" IS NOT DISTINCT FROM (CASE WHEN k."scope" = 'tenant' THEN k."tenant_id" END);
UPDATE "endpoint_keys" SET "owner_user_id" = "created_by_user_id" WHERE "created_by_user_id" IS NOT NULL;
UPDATE "endpoint_keys" k SET "service_account_id" = s."id"
  FROM "service_accounts" s
 WHERE k."created_by_user_id" IS NULL AND s."created_by" = 'migration' AND s."tenant_id" = k."tenant_id";

ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_owner_check" CHECK (num_nonnulls("owner_user_id", "service_account_id") = 1);
ALTER TABLE "endpoint_keys" ADD CONSTRAINT "endpoint_keys_owner_check" CHECK (num_nonnulls("owner_user_id", "service_account_id") = 1);
-- people are disabled, never deleted: a person who owns keys cannot be removed from under them
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_owner_user_id_fkey"
    FOREIGN KEY ("owner_user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_service_account_id_fkey"
    FOREIGN KEY ("service_account_id") REFERENCES "service_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "endpoint_keys" ADD CONSTRAINT "endpoint_keys_owner_user_id_fkey"
    FOREIGN KEY ("owner_user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "endpoint_keys" ADD CONSTRAINT "endpoint_keys_service_account_id_fkey"
    FOREIGN KEY ("service_account_id") REFERENCES "service_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE INDEX "api_keys_owner_user_id_idx" ON "api_keys"("owner_user_id");
CREATE INDEX "api_keys_service_account_id_idx" ON "api_keys"("service_account_id");
CREATE INDEX "endpoint_keys_owner_user_id_idx" ON "endpoint_keys"("owner_user_id");
CREATE INDEX "endpoint_keys_service_account_id_idx" ON "endpoint_keys"("service_account_id");

-- The rights of a key's owner as they are now: an enabled person or service account, its role, its tenant.
CREATE FUNCTION "key_owner"("p_user" UUID, "p_account" UUID) RETURNS TABLE ("role" TEXT, "tenant_id" UUID, "disabled" BOOLEAN)
    LANGUAGE sql STABLE AS $$
    SELECT u."role", u."tenant_id", u."disabled_at" IS NOT NULL FROM "users" u WHERE u."id" = p_user
    UNION ALL
    SELECT s."role", s."tenant_id", s."disabled_at" IS NOT NULL FROM "service_accounts" s WHERE s."id" = p_account
$$;

-- A key is born, and stays, within its owner's rights: an enabled owner; a tenant owner only for its
-- own tenant, with no more than its own role. Replaces issue 15's creator guard, which checked the
-- creating user only (and nothing for keys made with keys); it now also runs when a key's owner,
-- scope, tenant or role changes, so no later update can give a key more than its owner has.
CREATE OR REPLACE FUNCTION "api_keys_creator_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    o RECORD;
BEGIN
    -- a revoked key opens nothing, whatever it says
    IF TG_OP = 'UPDATE' AND NEW."revoked_at" IS NOT NULL THEN RETURN NEW; END IF;
    IF num_nonnulls(NEW."owner_user_id", NEW."service_account_id") <> 1 THEN
        RAISE EXCEPTION 'An API key has exactly one owner: a person or a service account' USING ERRCODE = '23514';
    END IF;
    SELECT * INTO o FROM "key_owner"(NEW."owner_user_id", NEW."service_account_id");
    IF NOT FOUND OR o."disabled" THEN
        RAISE EXCEPTION 'API key owner % is disabled or gone', COALESCE(NEW."owner_user_id", NEW."service_account_id") USING ERRCODE = '23514';
    END IF;
    IF o."role" <> 'operator' AND (NEW."scope" <> 'tenant' OR NEW."tenant_id" IS DISTINCT FROM o."tenant_id"
                                   OR (o."role" = 'tenant_member' AND NEW."tenant_role" <> 'tenant_member')) THEN
        RAISE EXCEPTION 'API key would carry more than its owner % may do', COALESCE(NEW."owner_user_id", NEW."service_account_id") USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END $$;
DROP TRIGGER "api_keys_creator_guard" ON "api_keys";
CREATE TRIGGER "api_keys_creator_guard" BEFORE INSERT OR UPDATE OF "owner_user_id", "service_account_id", "scope", "tenant_id", "tenant_role" ON "api_keys"
    FOR EACH ROW EXECUTE FUNCTION "api_keys_creator_guard"();

-- Endpoint keys likewise: an enabled owner of the endpoint's own tenant (or an operator).
CREATE FUNCTION "endpoint_keys_owner_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    o RECORD;
BEGIN
    IF TG_OP = 'UPDATE' AND NEW."revoked_at" IS NOT NULL THEN RETURN NEW; END IF;
    IF num_nonnulls(NEW."owner_user_id", NEW."service_account_id") <> 1 THEN
        RAISE EXCEPTION 'An endpoint key has exactly one owner: a person or a service account' USING ERRCODE = '23514';
    END IF;
    SELECT * INTO o FROM "key_owner"(NEW."owner_user_id", NEW."service_account_id");
    IF NOT FOUND OR o."disabled" THEN
        RAISE EXCEPTION 'Endpoint key owner % is disabled or gone', COALESCE(NEW."owner_user_id", NEW."service_account_id") USING ERRCODE = '23514';
    END IF;
    IF o."role" <> 'operator' AND NEW."tenant_id" IS DISTINCT FROM o."tenant_id" THEN
        RAISE EXCEPTION 'Endpoint key of another tenant than its owner %', COALESCE(NEW."owner_user_id", NEW."service_account_id") USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "endpoint_keys_owner_guard" BEFORE INSERT OR UPDATE OF "owner_user_id", "service_account_id", "tenant_id" ON "endpoint_keys"
    FOR EACH ROW EXECUTE FUNCTION "endpoint_keys_owner_guard"();

-- Disabling a person revokes every key they own (made by them, or with their keys), and demoting a
-- tenant admin narrows their tenant keys to member rights, in the same transaction, whatever changed
-- the user. Replaces issue 15's version, which followed the creating user only.
CREATE OR REPLACE FUNCTION "users_keys_follow_owner"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD."disabled_at" IS NULL AND NEW."disabled_at" IS NOT NULL THEN
        UPDATE "api_keys" SET "revoked_at" = now() WHERE "owner_user_id" = NEW."id" AND "revoked_at" IS NULL;
    END IF;
    IF NEW."role" = 'tenant_member' AND OLD."role" IS DISTINCT FROM 'tenant_member' THEN
        UPDATE "api_keys" SET "tenant_role" = 'tenant_member'
         WHERE "owner_user_id" = NEW."id" AND "scope" = 'tenant' AND "tenant_role" <> 'tenant_member' AND "revoked_at" IS NULL;
    END IF;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION "users_endpoint_keys_follow_owner"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "endpoint_keys" SET "revoked_at" = now() WHERE "owner_user_id" = NEW."id" AND "revoked_at" IS NULL;
    RETURN NULL;
END $$;

-- Service accounts govern their keys as people do.
CREATE FUNCTION "service_accounts_keys_follow"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD."disabled_at" IS NULL AND NEW."disabled_at" IS NOT NULL THEN
        UPDATE "api_keys" SET "revoked_at" = now() WHERE "service_account_id" = NEW."id" AND "revoked_at" IS NULL;
        UPDATE "endpoint_keys" SET "revoked_at" = now() WHERE "service_account_id" = NEW."id" AND "revoked_at" IS NULL;
    END IF;
    IF NEW."role" = 'tenant_member' AND OLD."role" IS DISTINCT FROM 'tenant_member' THEN
        UPDATE "api_keys" SET "tenant_role" = 'tenant_member'
         WHERE "service_account_id" = NEW."id" AND "scope" = 'tenant' AND "tenant_role" <> 'tenant_member' AND "revoked_at" IS NULL;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER "service_accounts_keys_follow" AFTER UPDATE OF "disabled_at", "role" ON "service_accounts"
    FOR EACH ROW EXECUTE FUNCTION "service_accounts_keys_follow"();
-- a service account changes role within its kind only: a tenant's account never becomes an operator
CREATE FUNCTION "service_accounts_role_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."tenant_id" IS DISTINCT FROM OLD."tenant_id" THEN
        RAISE EXCEPTION 'A service account stays with its tenant' USING ERRCODE = '23514';
    END IF;
    IF OLD."disabled_at" IS NOT NULL AND NEW."disabled_at" IS NULL THEN
        RAISE EXCEPTION 'A disabled service account stays disabled: create another' USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "service_accounts_role_guard" BEFORE UPDATE ON "service_accounts"
    FOR EACH ROW EXECUTE FUNCTION "service_accounts_role_guard"();
