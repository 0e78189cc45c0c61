-- An API key never carries more than the user who created it may do now. A tenant key records the
-- tenant role it acts with (admin, or member once its creator was demoted); disabling a user revokes
-- every key they created, and demoting a tenant admin narrows theirs, in the same transaction,
-- whichever code path (or psql session) changed the user. Keys made by the platform itself (the
-- command line, the seed) have no creator and are governed by revocation alone.

ALTER TABLE "api_keys" ADD COLUMN "tenant_role" TEXT;
UPDATE "api_keys" SET "tenant_role" = 'tenant_admin' WHERE "scope" = 'tenant';
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_role_check" CHECK (
    (("scope" = 'tenant') = ("tenant_role" IS NOT NULL)) AND ("tenant_role" IS NULL OR "tenant_role" IN ('tenant_admin', 'tenant_member')));
CREATE INDEX "api_keys_created_by_user_id_idx" ON "api_keys"("created_by_user_id");

-- a key is born within its creator's rights: an enabled user; a tenant user only for their own
-- tenant, with no more than their own role
CREATE FUNCTION "api_keys_creator_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    u RECORD;
BEGIN
    IF NEW."created_by_user_id" IS NULL THEN RETURN NEW; END IF;
    SELECT "role", "tenant_id", "disabled_at" INTO u FROM "users" WHERE "id" = NEW."created_by_user_id";
    IF NOT FOUND OR u."disabled_at" IS NOT NULL THEN
        RAISE EXCEPTION 'API key creator % is disabled or gone', NEW."created_by_user_id" USING ERRCODE = '23514';
    END IF;
    IF u."role" <> 'operator' AND (NEW."scope" <> 'tenant' OR NEW."tenant_id" IS DISTINCT FROM u."tenant_id"
                                   OR (u."role" = 'tenant_member' AND NEW."tenant_role" <> 'tenant_member')) THEN
        RAISE EXCEPTION 'API key would carry more than its creator % may do', NEW."created_by_user_id" USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "api_keys_creator_guard" BEFORE INSERT ON "api_keys"
    FOR EACH ROW EXECUTE FUNCTION "api_keys_creator_guard"();

CREATE FUNCTION "users_keys_follow_owner"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD."disabled_at" IS NULL AND NEW."disabled_at" IS NOT NULL THEN
        UPDATE "api_keys" SET "revoked_at" = now() WHERE "created_by_user_id" = NEW."id" AND "revoked_at" IS NULL;
    END IF;
    IF NEW."role" = 'tenant_member' AND OLD."role" IS DISTINCT FROM 'tenant_member' THEN
        UPDATE "api_keys" SET "tenant_role" = 'tenant_member'
         WHERE "created_by_user_id" = NEW."id" AND "scope" = 'tenant' AND "tenant_role" <> 'tenant_member' AND "revoked_at" IS NULL;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER "users_keys_follow_owner" AFTER UPDATE OF "disabled_at", "role" ON "users"
    FOR EACH ROW EXECUTE FUNCTION "users_keys_follow_owner"();
