-- The inference gateway: tenants call their endpoints through GPUForge, which proxies each request
-- to a ready replica at the address its node's agent published, probes replicas itself, and
-- records what it saw per minute (the SLA and the autoscaler read it).

-- What a serving container listens on inside, and where it answers health probes.
ALTER TABLE "endpoints"
    ADD COLUMN "serving_port" INTEGER NOT NULL DEFAULT 8000,
    ADD COLUMN "health_path"  TEXT NOT NULL DEFAULT '/health',
    ADD CONSTRAINT "endpoints_serving_port_check" CHECK ("serving_port" BETWEEN 1 AND 65535),
    ADD CONSTRAINT "endpoints_health_path_check" CHECK ("health_path" ~ '^/[A-Za-z0-9._~/-]{0,199}$');

-- Where a replica serves: the host port its agent published for the serving port (on the node's
-- address), and what the gateway's probes last found.
ALTER TABLE "endpoint_replicas"
    ADD COLUMN "host_port"           INTEGER,
    ADD COLUMN "last_probe_ok_at"    TIMESTAMPTZ(3),
    ADD COLUMN "probe_failing_since" TIMESTAMPTZ(3),
    ADD CONSTRAINT "endpoint_replicas_host_port_check" CHECK ("host_port" IS NULL OR "host_port" BETWEEN 1 AND 65535);
-- two live replicas of one node never claim one port
CREATE UNIQUE INDEX "endpoint_replicas_node_port_key" ON "endpoint_replicas"("node_id", "host_port") WHERE "host_port" IS NOT NULL AND "status" <> 'stopped';

-- Keys a tenant makes for one endpoint: they call that endpoint through the gateway and nothing
-- else. Only their SHA-256 is kept. They die with the endpoint, with their creator's account, and
-- when revoked or expired.
CREATE TABLE "endpoint_keys" (
    "id"                 UUID NOT NULL DEFAULT gen_random_uuid(),
    "endpoint_id"        UUID NOT NULL,
    "tenant_id"          UUID NOT NULL,
    "name"               TEXT NOT NULL,
    "prefix"             TEXT NOT NULL,
    "key_hash"           TEXT NOT NULL,
    "created_by_user_id" UUID,
    "created_by"         TEXT NOT NULL,
    "created_at"         TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at"         TIMESTAMPTZ(3),
    "last_used_at"       TIMESTAMPTZ(3),
    "revoked_at"         TIMESTAMPTZ(3),
    CONSTRAINT "endpoint_keys_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "endpoint_keys_name_check" CHECK (length("name") BETWEEN 1 AND 100),
    CONSTRAINT "endpoint_keys_prefix_check" CHECK (length("prefix") = 12 AND "prefix" LIKE 'gf\_%'),
    CONSTRAINT "endpoint_keys_key_hash_check" CHECK ("key_hash" ~ '^[0-9a-f]{64}$'),
    CONSTRAINT "endpoint_keys_expires_at_check" CHECK ("expires_at" IS NULL OR "expires_at" > "created_at")
);
CREATE UNIQUE INDEX "endpoint_keys_key_hash_key" ON "endpoint_keys"("key_hash");
CREATE INDEX "endpoint_keys_endpoint_id_idx" ON "endpoint_keys"("endpoint_id", "created_at");
ALTER TABLE "endpoint_keys" ADD CONSTRAINT "endpoint_keys_endpoint_tenant_fkey" FOREIGN KEY ("endpoint_id", "tenant_id") REFERENCES "endpoints"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "endpoint_keys" ADD CONSTRAINT "endpoint_keys_created_by_user_id_fkey" FOREIGN KEY ("created_by_user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Gateway processes remember the keys they checked while listening to `api_keys_changed`
-- (lib/api-keys/authenticate-api-key.ts does the same for agents): revoking an endpoint key,
-- suspending a tenant or deleting an endpoint tells them to forget, at commit.
CREATE TRIGGER "endpoint_keys_notify_update" AFTER UPDATE ON "endpoint_keys"
    FOR EACH ROW WHEN (OLD."revoked_at" IS DISTINCT FROM NEW."revoked_at" OR OLD."key_hash" IS DISTINCT FROM NEW."key_hash" OR OLD."expires_at" IS DISTINCT FROM NEW."expires_at")
    EXECUTE FUNCTION "api_keys_notify_change"();
CREATE TRIGGER "endpoint_keys_notify_delete" AFTER DELETE ON "endpoint_keys"
    FOR EACH ROW EXECUTE FUNCTION "api_keys_notify_change"();
CREATE TRIGGER "tenants_notify_status" AFTER UPDATE OF "status" ON "tenants"
    FOR EACH ROW WHEN (OLD."status" IS DISTINCT FROM NEW."status") EXECUTE FUNCTION "api_keys_notify_change"();
CREATE TRIGGER "endpoints_notify_deleted" AFTER UPDATE OF "deleted_at" ON "endpoints"
    FOR EACH ROW WHEN (OLD."deleted_at" IS NULL AND NEW."deleted_at" IS NOT NULL) EXECUTE FUNCTION "api_keys_notify_change"();

-- A disabled user's endpoint keys are revoked with their API keys, in the same transaction.
CREATE FUNCTION "users_endpoint_keys_follow_owner"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "endpoint_keys" SET "revoked_at" = now() WHERE "created_by_user_id" = NEW."id" AND "revoked_at" IS NULL;
    RETURN NULL;
END $$;
CREATE TRIGGER "users_endpoint_keys_follow_owner" AFTER UPDATE OF "disabled_at" ON "users"
    FOR EACH ROW WHEN (OLD."disabled_at" IS NULL AND NEW."disabled_at" IS NOT NULL) EXECUTE FUNCTION "users_endpoint_keys_follow_owner"();

-- What the gateway saw per endpoint and minute: requests, errors (5xx and requests it could not
-- serve) and a latency histogram (lib/gateway/latency-histogram.ts names the buckets). Every gateway
-- process adds its own counts, so figures from many processes sum exactly, percentiles included.
CREATE TABLE "endpoint_gateway_1m" (
    "endpoint_id"  UUID NOT NULL,
    "bucket"       TIMESTAMPTZ(3) NOT NULL,
    "requests"     BIGINT NOT NULL,
    "errors"       BIGINT NOT NULL,
    "latency_hist" BIGINT[] NOT NULL,
    CONSTRAINT "endpoint_gateway_1m_pkey" PRIMARY KEY ("endpoint_id", "bucket"),
    CONSTRAINT "endpoint_gateway_1m_bucket_check" CHECK ("bucket" = date_trunc('minute', "bucket")),
    CONSTRAINT "endpoint_gateway_1m_counts_check" CHECK ("requests" > 0 AND "errors" >= 0 AND "errors" <= "requests"),
    CONSTRAINT "endpoint_gateway_1m_hist_check" CHECK (cardinality("latency_hist") BETWEEN 1 AND 64 AND 0 <= ALL("latency_hist"))
);
CREATE INDEX "endpoint_gateway_1m_bucket_idx" ON "endpoint_gateway_1m"("bucket");
ALTER TABLE "endpoint_gateway_1m" ADD CONSTRAINT "endpoint_gateway_1m_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;
