-- Processes remember agents' keys for a short while (lib/api-keys/agent-key-cache.ts) so the
-- agents' hot paths skip a database round trip per request. The database tells them when to
-- forget: any change that could make a remembered key wrong (revocation, a new hash, scope or
-- binding, deletion, including by cascade or by hand in psql) notifies `api_keys_changed`, and
-- every listening process forgets what it remembers. NOTIFY is delivered at commit.
CREATE FUNCTION "api_keys_notify_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('api_keys_changed', '');
  RETURN NULL;
END $$;

CREATE TRIGGER "api_keys_notify_update" AFTER UPDATE ON "api_keys"
  FOR EACH ROW WHEN (
    OLD."revoked_at" IS DISTINCT FROM NEW."revoked_at" OR OLD."key_hash" IS DISTINCT FROM NEW."key_hash" OR
    OLD."scope" IS DISTINCT FROM NEW."scope" OR OLD."cluster_id" IS DISTINCT FROM NEW."cluster_id" OR
    OLD."tenant_id" IS DISTINCT FROM NEW."tenant_id")
  EXECUTE FUNCTION "api_keys_notify_change"();
CREATE TRIGGER "api_keys_notify_delete" AFTER DELETE ON "api_keys"
  FOR EACH ROW EXECUTE FUNCTION "api_keys_notify_change"();
CREATE TRIGGER "api_keys_notify_truncate" AFTER TRUNCATE ON "api_keys"
  FOR EACH STATEMENT EXECUTE FUNCTION "api_keys_notify_change"();
