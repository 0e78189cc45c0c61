-- Tenant handover you can prove (issue 28): per-cluster handover settings (the operator's wipe
-- command, whether and against which policy nodes are attested), the agents' wipe reports, TPM
-- attestation (enrolled keys, single-use nonces, versioned policies, signed verdicts and the
-- evidence behind them, the public keys verdicts are signed with), the public listener's views of
-- verdicts and keys, and the alert types a failed handover and a changed attestation key raise.
-- Verdicts, evidence, policy versions, wipe reports and signing keys are append-only.

CREATE FUNCTION "attestation_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- the rows of a node that no longer exists go with it (its cluster was deleted); nested, as
    -- PL/pgSQL does not promise to skip OLD."node_id" for tables without one
    IF TG_OP = 'DELETE' AND TG_ARGV[0] = 'node' THEN
        IF NOT EXISTS (SELECT 1 FROM "nodes" WHERE "id" = OLD."node_id") THEN
            RETURN OLD;
        END IF;
    END IF;
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = '23514';
END $$;

-- 1. Policies: a name, and its versions (each change is a new version, never an edit).
CREATE TABLE "attestation_policies" (
    "id"              UUID NOT NULL DEFAULT gen_random_uuid(),
    "name"            TEXT NOT NULL,
    "description"     TEXT,
    "current_version" INTEGER NOT NULL DEFAULT 1,
    "created_by"      TEXT NOT NULL,
    "created_at"      TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at"      TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "attestation_policies_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "attestation_policies_name_check" CHECK ("name" ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$'),
    CONSTRAINT "attestation_policies_description_check" CHECK ("description" IS NULL OR length("description") <= 500),
    CONSTRAINT "attestation_policies_version_check" CHECK ("current_version" >= 1)
);
CREATE UNIQUE INDEX "attestation_policies_name_key" ON "attestation_policies"(lower("name"));

CREATE TABLE "attestation_policy_versions" (
    "policy_id"  UUID NOT NULL,
    "version"    INTEGER NOT NULL,
    "body"       JSONB NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "attestation_policy_versions_pkey" PRIMARY KEY ("policy_id", "version"),
    CONSTRAINT "attestation_policy_versions_version_check" CHECK ("version" >= 1),
    -- the sections every policy has (lib/attestation/policy.ts checks the rest)
    CONSTRAINT "attestation_policy_versions_body_check" CHECK ("body" ? 'pcr_bank' AND "body" ? 'pcrs' AND "body" ? 'require')
);
ALTER TABLE "attestation_policy_versions" ADD CONSTRAINT "attestation_policy_versions_policy_id_fkey"
    FOREIGN KEY ("policy_id") REFERENCES "attestation_policies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE TRIGGER "attestation_policy_versions_append_only" BEFORE UPDATE OR DELETE ON "attestation_policy_versions"
    FOR EACH ROW EXECUTE FUNCTION "attestation_append_only"('policy');
-- a policy's current version is one it has
ALTER TABLE "attestation_policies" ADD CONSTRAINT "attestation_policies_current_fkey"
    FOREIGN KEY ("id", "current_version") REFERENCES "attestation_policy_versions"("policy_id", "version") DEFERRABLE INITIALLY DEFERRED;

-- 2. Per-cluster handover settings (a cluster without a row has the defaults: no wipe command, GPU
-- resets only; attestation required, against no policy until one is named, so it fails closed).
CREATE TABLE "cluster_handover_settings" (
    "cluster_id"            UUID NOT NULL,
    -- run on the host by the agent (never by tenant code), e.g. a disk wipe; NULL: GPU resets only
    "wipe_command"          TEXT,
    "wipe_timeout_s"        INTEGER NOT NULL DEFAULT 1800,
    -- 'off' hands nodes over after the wipe without proof: the operator's explicit choice
    "attestation"           TEXT NOT NULL DEFAULT 'required',
    "attestation_policy_id" UUID,
    "attestation_timeout_s" INTEGER NOT NULL DEFAULT 600,
    "updated_by"            TEXT NOT NULL,
    "updated_at"            TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "cluster_handover_settings_pkey" PRIMARY KEY ("cluster_id"),
    CONSTRAINT "cluster_handover_settings_wipe_command_check" CHECK ("wipe_command" IS NULL OR length("wipe_command") BETWEEN 1 AND 4000),
    CONSTRAINT "cluster_handover_settings_wipe_timeout_check" CHECK ("wipe_timeout_s" BETWEEN 30 AND 86400),
    CONSTRAINT "cluster_handover_settings_attestation_check" CHECK ("attestation" IN ('required', 'off')),
    CONSTRAINT "cluster_handover_settings_attestation_timeout_check" CHECK ("attestation_timeout_s" BETWEEN 30 AND 86400)
);
ALTER TABLE "cluster_handover_settings" ADD CONSTRAINT "cluster_handover_settings_cluster_id_fkey"
    FOREIGN KEY ("cluster_id") REFERENCES "clusters"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "cluster_handover_settings" ADD CONSTRAINT "cluster_handover_settings_policy_id_fkey"
    FOREIGN KEY ("attestation_policy_id") REFERENCES "attestation_policies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- 3. Wipe reports: what the agent says it did to each device, one report per handover.
CREATE TABLE "node_wipe_reports" (
    "id"          BIGSERIAL NOT NULL,
    "node_id"     UUID NOT NULL,
    "workflow_id" UUID NOT NULL,
    "devices"     JSONB NOT NULL,
    "result"      TEXT NOT NULL,
    "reported_by" TEXT NOT NULL,
    "created_at"  TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "node_wipe_reports_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "node_wipe_reports_result_check" CHECK ("result" IN ('ok', 'failed')),
    CONSTRAINT "node_wipe_reports_devices_check" CHECK (jsonb_typeof("devices") = 'array' AND jsonb_array_length("devices") BETWEEN 1 AND 512)
);
CREATE UNIQUE INDEX "node_wipe_reports_workflow_id_key" ON "node_wipe_reports"("workflow_id");
CREATE INDEX "node_wipe_reports_node_id_idx" ON "node_wipe_reports"("node_id", "created_at");
ALTER TABLE "node_wipe_reports" ADD CONSTRAINT "node_wipe_reports_workflow_node_fkey"
    FOREIGN KEY ("workflow_id", "node_id") REFERENCES "node_workflows"("id", "node_id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE TRIGGER "node_wipe_reports_append_only" BEFORE UPDATE OR DELETE ON "node_wipe_reports"
    FOR EACH ROW EXECUTE FUNCTION "attestation_append_only"('node');

-- 4. Attestation keys: the first a node enrols is pinned; an operator retires it to let the node
-- enrol another. Retiring is the only change a row ever sees.
CREATE TABLE "attestation_identities" (
    "id"                UUID NOT NULL DEFAULT gen_random_uuid(),
    "node_id"           UUID NOT NULL,
    "ak_public_pem"     TEXT NOT NULL,
    "ak_qualified_name" TEXT,
    "ek_public_pem"     TEXT,
    "tpm_kind"          TEXT NOT NULL,
    "enrolled_by"       TEXT NOT NULL,
    "enrolled_at"       TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retired_at"        TIMESTAMPTZ(3),
    "retired_by"        TEXT,
    CONSTRAINT "attestation_identities_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "attestation_identities_tpm_kind_check" CHECK ("tpm_kind" IN ('tpm', 'swtpm', 'simulated')),
    CONSTRAINT "attestation_identities_ak_check" CHECK ("ak_public_pem" LIKE '-----BEGIN PUBLIC KEY-----%' AND length("ak_public_pem") <= 4096),
    CONSTRAINT "attestation_identities_name_check" CHECK ("ak_qualified_name" IS NULL OR "ak_qualified_name" ~ '^[0-9a-f]{4,132}$'),
    CONSTRAINT "attestation_identities_retired_check" CHECK (("retired_at" IS NULL) = ("retired_by" IS NULL))
);
CREATE UNIQUE INDEX "attestation_identities_live_key" ON "attestation_identities"("node_id") WHERE "retired_at" IS NULL;
ALTER TABLE "attestation_identities" ADD CONSTRAINT "attestation_identities_node_id_fkey"
    FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE FUNCTION "attestation_identities_retire_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF NOT EXISTS (SELECT 1 FROM "nodes" WHERE "id" = OLD."node_id") THEN RETURN OLD; END IF;
        RAISE EXCEPTION 'attestation identities are retired, never deleted' USING ERRCODE = '23514';
    END IF;
    IF OLD."retired_at" IS NOT NULL OR NEW."id" <> OLD."id" OR NEW."node_id" <> OLD."node_id" OR NEW."ak_public_pem" <> OLD."ak_public_pem"
       OR NEW."ak_qualified_name" IS DISTINCT FROM OLD."ak_qualified_name" OR NEW."ek_public_pem" IS DISTINCT FROM OLD."ek_public_pem"
       OR NEW."tpm_kind" <> OLD."tpm_kind" OR NEW."enrolled_at" <> OLD."enrolled_at" OR NEW."enrolled_by" <> OLD."enrolled_by" THEN
        RAISE EXCEPTION 'an enrolled attestation key is only ever retired' USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "attestation_identities_retire_only" BEFORE UPDATE OR DELETE ON "attestation_identities"
    FOR EACH ROW EXECUTE FUNCTION "attestation_identities_retire_only"();

-- 5. Nonces: issued to one node, for the PCRs its policy needs, used once, before they expire.
CREATE TABLE "attestation_nonces" (
    "nonce"         TEXT NOT NULL,
    "node_id"       UUID NOT NULL,
    "pcr_selection" INTEGER[] NOT NULL,
    "issued_at"     TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at"    TIMESTAMPTZ(3) NOT NULL,
    "used_at"       TIMESTAMPTZ(3),
    CONSTRAINT "attestation_nonces_pkey" PRIMARY KEY ("nonce"),
    CONSTRAINT "attestation_nonces_nonce_check" CHECK ("nonce" ~ '^[0-9a-f]{32,128}$'),
    CONSTRAINT "attestation_nonces_window_check" CHECK ("expires_at" > "issued_at"),
    CONSTRAINT "attestation_nonces_used_check" CHECK ("used_at" IS NULL OR "used_at" >= "issued_at")
);
CREATE INDEX "attestation_nonces_node_id_idx" ON "attestation_nonces"("node_id", "issued_at");
CREATE INDEX "attestation_nonces_expires_at_idx" ON "attestation_nonces"("expires_at");
ALTER TABLE "attestation_nonces" ADD CONSTRAINT "attestation_nonces_node_id_fkey"
    FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- 6. The public keys verdicts were signed with, recorded the first time each signs: the JWKS
-- keeps every one, so a verdict signed before a rotation still verifies.
CREATE TABLE "attestation_signing_keys" (
    "kid"           TEXT NOT NULL,
    "public_jwk"    JSONB NOT NULL,
    "first_used_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "attestation_signing_keys_pkey" PRIMARY KEY ("kid"),
    CONSTRAINT "attestation_signing_keys_jwk_check" CHECK ("public_jwk"->>'kty' = 'OKP' AND "public_jwk"->>'crv' = 'Ed25519' AND "public_jwk"->>'kid' = "kid" AND "public_jwk" ? 'x' AND NOT "public_jwk" ? 'd')
);
CREATE TRIGGER "attestation_signing_keys_append_only" BEFORE UPDATE OR DELETE ON "attestation_signing_keys"
    FOR EACH ROW EXECUTE FUNCTION "attestation_append_only"('key');

-- 7. Verdicts: what was checked, against what, with what result, signed (append-only).
CREATE TABLE "attestations" (
    "id"             UUID NOT NULL DEFAULT gen_random_uuid(),
    "node_id"        UUID NOT NULL,
    "workflow_id"    UUID,
    "nonce"          TEXT,
    "result"         TEXT NOT NULL,
    "failures"       JSONB NOT NULL,
    "policy_id"      UUID,
    "policy_name"    TEXT,
    "policy_version" INTEGER,
    "pcr_digest"     TEXT,
    "tpm_kind"       TEXT,
    "kid"            TEXT NOT NULL,
    "jws"            TEXT NOT NULL,
    "created_at"     TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "attestations_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "attestations_result_check" CHECK ("result" IN ('pass', 'fail')),
    -- a pass has no failure and a fail has at least one: the result cannot disagree with its reasons
    CONSTRAINT "attestations_failures_check" CHECK (jsonb_typeof("failures") = 'array' AND (("result" = 'pass') = (jsonb_array_length("failures") = 0))),
    CONSTRAINT "attestations_policy_check" CHECK (("policy_name" IS NULL) = ("policy_version" IS NULL)),
    CONSTRAINT "attestations_tpm_kind_check" CHECK ("tpm_kind" IS NULL OR "tpm_kind" IN ('tpm', 'swtpm', 'simulated')),
    CONSTRAINT "attestations_jws_check" CHECK ("jws" ~ '^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$')
);
CREATE INDEX "attestations_node_id_created_at_idx" ON "attestations"("node_id", "created_at" DESC);
CREATE INDEX "attestations_workflow_id_idx" ON "attestations"("workflow_id") WHERE "workflow_id" IS NOT NULL;
ALTER TABLE "attestations" ADD CONSTRAINT "attestations_node_id_fkey"
    FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "attestations" ADD CONSTRAINT "attestations_workflow_id_fkey"
    FOREIGN KEY ("workflow_id") REFERENCES "node_workflows"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "attestations" ADD CONSTRAINT "attestations_policy_version_fkey"
    FOREIGN KEY ("policy_id", "policy_version") REFERENCES "attestation_policy_versions"("policy_id", "version") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "attestations" ADD CONSTRAINT "attestations_kid_fkey"
    FOREIGN KEY ("kid") REFERENCES "attestation_signing_keys"("kid") ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE FUNCTION "attestations_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM "nodes" WHERE "id" = OLD."node_id") THEN RETURN OLD; END IF;
    -- the one change the database makes itself: the workflow a verdict served was deleted with its node
    IF TG_OP = 'UPDATE' AND NEW."workflow_id" IS NULL AND OLD."workflow_id" IS NOT NULL
       AND (to_jsonb(NEW) - 'workflow_id') = (to_jsonb(OLD) - 'workflow_id') THEN RETURN NEW; END IF;
    RAISE EXCEPTION 'attestations is append-only' USING ERRCODE = '23514';
END $$;
CREATE TRIGGER "attestations_append_only" BEFORE UPDATE OR DELETE ON "attestations"
    FOR EACH ROW EXECUTE FUNCTION "attestations_append_only"();

-- The evidence each verdict judged, as the node sent it (for the operator who asks why).
CREATE TABLE "attestation_evidence" (
    "attestation_id" UUID NOT NULL,
    "node_id"        UUID NOT NULL,
    "quote"          BYTEA,
    "signature"      BYTEA,
    "pcrs"           JSONB,
    "event_log"      BYTEA,
    "wipe_report"    JSONB,
    "gpu_reports"    JSONB,
    CONSTRAINT "attestation_evidence_pkey" PRIMARY KEY ("attestation_id")
);
ALTER TABLE "attestation_evidence" ADD CONSTRAINT "attestation_evidence_attestation_id_fkey"
    FOREIGN KEY ("attestation_id") REFERENCES "attestations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE TRIGGER "attestation_evidence_append_only" BEFORE UPDATE OR DELETE ON "attestation_evidence"
    FOR EACH ROW EXECUTE FUNCTION "attestation_append_only"('node');

-- 8. The read-only public listener: the keys verdicts are signed with, and each node's verdicts
-- (signed documents about hardware, no tenant in them).
CREATE VIEW "public_api"."attestation_keys" AS
    SELECT kid, public_jwk, first_used_at FROM attestation_signing_keys;
CREATE VIEW "public_api"."node_attestations" AS
    SELECT id, node_id, result, policy_name, policy_version, kid, jws, created_at FROM attestations;
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'gpuforge_public_reader') THEN
        EXECUTE 'GRANT SELECT ON "public_api"."attestation_keys", "public_api"."node_attestations" TO "gpuforge_public_reader"';
    END IF;
END $$;

-- 9. Alerts a handover raises: a failed wipe or attestation (the node is quarantined), and a node
-- presenting another attestation key than the one it enrolled. In place, keeping whatever types
-- other migrations added.
DO $$
DECLARE
    c RECORD;
    t TEXT;
BEGIN
    FOREACH t IN ARRAY ARRAY['handover_failed', 'attestation_key_mismatch'] LOOP
        FOR c IN SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
                  WHERE conrelid = '"alert_events"'::regclass AND conname IN ('alert_events_type_check', 'alert_events_rule_check')
        LOOP
            IF position(quote_literal(t) IN c.def) = 0 THEN
                EXECUTE format('ALTER TABLE "alert_events" DROP CONSTRAINT %I, ADD CONSTRAINT %I %s', c.conname, c.conname,
                    replace(c.def, 'ARRAY[', 'ARRAY[' || quote_literal(t) || '::text, '));
            END IF;
        END LOOP;
    END LOOP;
END $$;
