-- Issue 28: a node's BMC (lib/bmc). Where its Redfish service is (the origin only: discovery always
-- starts at /redfish/v1/), who logs in, the password sealed with AES-256-GCM under
-- SETTINGS_ENCRYPTION_KEY (lib/settings/secret-box.ts, the node's id bound as additional data so a
-- ciphertext copied to another node's row does not open), whether its certificate is checked (and
-- against which CA), and what the last contact found or why it failed. The password is never
-- returned by any API or page.
CREATE TABLE "node_bmcs" (
    "node_id"             UUID NOT NULL,
    "url"                 TEXT NOT NULL,
    "username"            TEXT NOT NULL,
    "password_ciphertext" TEXT NOT NULL,
    "verify_tls"          BOOLEAN NOT NULL,
    "ca_pem"              TEXT,
    -- the Redfish system of this node when the BMC manages several (its Id, or its @odata.id)
    "system_id"           TEXT,
    -- what the last successful contact discovered: system, manager and virtual media paths, the
    -- system's PowerState, manufacturer and model
    "discovered"          JSONB NOT NULL DEFAULT '{}',
    "last_contact_at"     TIMESTAMPTZ(3),
    "last_error_kind"     TEXT,
    "last_error"          TEXT,
    "last_error_at"       TIMESTAMPTZ(3),
    "created_at"          TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at"          TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_by"          TEXT NOT NULL,
    CONSTRAINT "node_bmcs_pkey" PRIMARY KEY ("node_id"),
    CONSTRAINT "node_bmcs_url_check" CHECK ("url" ~ '^https?://[^/?#@[:space:]]+$' AND length("url") <= 300),
    CONSTRAINT "node_bmcs_username_check" CHECK (length("username") BETWEEN 1 AND 128),
    CONSTRAINT "node_bmcs_password_check" CHECK ("password_ciphertext" LIKE 'v1:%' AND length("password_ciphertext") <= 1024),
    -- a certificate can only be checked over TLS; a CA only means something when it is checked
    CONSTRAINT "node_bmcs_tls_check" CHECK ((NOT "verify_tls" OR "url" LIKE 'https://%') AND ("ca_pem" IS NULL OR "verify_tls")),
    CONSTRAINT "node_bmcs_ca_check" CHECK ("ca_pem" IS NULL OR length("ca_pem") BETWEEN 1 AND 65536),
    CONSTRAINT "node_bmcs_system_id_check" CHECK ("system_id" IS NULL OR length("system_id") BETWEEN 1 AND 256),
    CONSTRAINT "node_bmcs_error_kind_check" CHECK ("last_error_kind" IS NULL OR "last_error_kind" IN (
        'unreachable', 'tls_untrusted', 'address_refused', 'credentials_refused', 'media_refused', 'not_supported',
        'task_failed', 'timeout', 'refused', 'server_error', 'bad_answer')),
    CONSTRAINT "node_bmcs_error_check" CHECK (("last_error_kind" IS NULL) = ("last_error" IS NULL) AND ("last_error" IS NULL) = ("last_error_at" IS NULL)),
    CONSTRAINT "node_bmcs_error_length_check" CHECK ("last_error" IS NULL OR length("last_error") <= 2000)
);
ALTER TABLE "node_bmcs" ADD CONSTRAINT "node_bmcs_node_id_fkey"
    FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
