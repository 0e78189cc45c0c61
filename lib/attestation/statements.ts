import { statement } from "@/lib/db/statement";

// The attestation domain's statements (lib/db/statement.ts), checked against the migrated
// database by tests/integration/sql-statements.test.ts.

// ---- enrolled keys ------------------------------------------------------------------------------

const IDENTITY_COLUMNS = {
  id: "uuid",
  node_id: "uuid",
  ak_public_pem: "text",
  ak_qualified_name: "text?",
  ek_public_pem: "text?",
  tpm_kind: "text",
  enrolled_by: "text",
  enrolled_at: "timestamptz",
} as const;
const IDENTITY_SELECT = `id, node_id, ak_public_pem, ak_qualified_name, ek_public_pem, tpm_kind, enrolled_by, enrolled_at`;

/** The node's ($1) pinned attestation key, if it enrolled one. */
export const LIVE_IDENTITY = statement("attestation.live-identity", {
  params: ["uuid"],
  columns: IDENTITY_COLUMNS,
  text: `SELECT ${IDENTITY_SELECT} FROM attestation_identities WHERE node_id = $1::uuid AND retired_at IS NULL`,
});

/** Pins the node's first key; no row when one is pinned already (the unique index decides races). */
export const ENROL_IDENTITY = statement("attestation.enrol-identity", {
  params: ["uuid", "text", "text?", "text?", "text", "text"],
  columns: IDENTITY_COLUMNS,
  text: `
    INSERT INTO attestation_identities (node_id, ak_public_pem, ak_qualified_name, ek_public_pem, tpm_kind, enrolled_by)
    VALUES ($1::uuid, $2::text, $3::text, $4::text, $5::text, $6::text)
    ON CONFLICT (node_id) WHERE retired_at IS NULL DO NOTHING
    RETURNING ${IDENTITY_SELECT}`,
});

/** An operator retires the node's ($1) pinned key ($2: who), so the node may enrol another. */
export const RETIRE_IDENTITY = statement("attestation.retire-identity", {
  params: ["uuid", "text"],
  columns: { id: "uuid" },
  text: `UPDATE attestation_identities SET retired_at = now(), retired_by = $2::text WHERE node_id = $1::uuid AND retired_at IS NULL RETURNING id`,
});

// ---- nonces -------------------------------------------------------------------------------------

export const INSERT_NONCE = statement("attestation.insert-nonce", {
  params: ["text", "uuid", "int4[]", "int4"],
  columns: { expires_at: "timestamptz" },
  text: `
    INSERT INTO attestation_nonces (nonce, node_id, pcr_selection, issued_at, expires_at)
    VALUES ($1::text, $2::uuid, $3::int4[], clock_timestamp(), clock_timestamp() + make_interval(secs => $4::int4))
    RETURNING expires_at`,
});

/**
 * The nonce $1 as it was before this use, used now if it was the node's ($2) and unused: single use
 * is the row lock and the one UPDATE, so two submissions of one nonce find it used once. An
 * expired nonce is used up too. No row: it was never issued.
 */
export const CONSUME_NONCE = statement("attestation.consume-nonce", {
  params: ["text", "uuid"],
  columns: { node_id: "uuid", expires_at: "timestamptz", used_at: "timestamptz?", now: "timestamptz" },
  text: `
    WITH old AS (
      SELECT nonce, node_id, expires_at, used_at FROM attestation_nonces WHERE nonce = $1::text FOR UPDATE
    ), used AS (
      UPDATE attestation_nonces n SET used_at = clock_timestamp()
        FROM old WHERE n.nonce = old.nonce AND old.used_at IS NULL AND old.node_id = $2::uuid
      RETURNING n.nonce
    )
    SELECT old.node_id, old.expires_at, old.used_at, clock_timestamp() AS now FROM old LEFT JOIN used ON used.nonce = old.nonce`,
});

/** Nonces expired more than a day ago: nothing can use them, and verdicts keep their value. */
export const PRUNE_NONCES = statement("attestation.prune-nonces", {
  params: [],
  columns: {},
  text: `DELETE FROM attestation_nonces WHERE expires_at < now() - interval '1 day'`,
});

// ---- policies -----------------------------------------------------------------------------------

const POLICY_COLUMNS = {
  id: "uuid",
  name: "text",
  description: "text?",
  current_version: "int4",
  created_at: "timestamptz",
  updated_at: "timestamptz",
  body: "jsonb",
  version_created_at: "timestamptz",
  version_created_by: "text",
} as const;
const POLICY_SELECT = `p.id, p.name, p.description, p.current_version, p.created_at, p.updated_at, v.body, v.created_at AS version_created_at, v.created_by AS version_created_by
      FROM attestation_policies p JOIN attestation_policy_versions v ON v.policy_id = p.id AND v.version = p.current_version`;

export const INSERT_POLICY = statement("attestation.insert-policy", {
  params: ["text", "text?", "text"],
  columns: { id: "uuid" },
  text: `INSERT INTO attestation_policies (name, description, created_by) VALUES ($1::text, $2::text, $3::text) RETURNING id`,
});

export const INSERT_POLICY_VERSION = statement("attestation.insert-policy-version", {
  params: ["uuid", "int4", "jsonb", "text"],
  columns: {},
  text: `INSERT INTO attestation_policy_versions (policy_id, version, body, created_by) VALUES ($1::uuid, $2::int4, $3::jsonb, $4::text)`,
});

export const LOCK_POLICY = statement("attestation.lock-policy", {
  params: ["uuid"],
  columns: { id: "uuid", name: "text", current_version: "int4" },
  text: `SELECT id, name, current_version FROM attestation_policies WHERE id = $1::uuid FOR UPDATE`,
});

/** The policy ($1) now stands at version $2 (and, when $3 is given, says $3). */
export const SET_POLICY_VERSION = statement("attestation.set-policy-version", {
  params: ["uuid", "int4", "text?", "bool"],
  columns: {},
  text: `
    UPDATE attestation_policies SET current_version = $2::int4, description = CASE WHEN $4::bool THEN $3::text ELSE description END, updated_at = now()
     WHERE id = $1::uuid`,
});

export const GET_POLICY = statement("attestation.get-policy", {
  params: ["uuid"],
  columns: POLICY_COLUMNS,
  text: `SELECT ${POLICY_SELECT} WHERE p.id = $1::uuid`,
});

export const LIST_POLICIES = statement("attestation.list-policies", {
  params: ["int4"],
  columns: POLICY_COLUMNS,
  text: `SELECT ${POLICY_SELECT} ORDER BY lower(p.name) LIMIT $1::int4`,
});

export const POLICY_VERSIONS = statement("attestation.policy-versions", {
  params: ["uuid"],
  columns: { version: "int4", body: "jsonb", created_at: "timestamptz", created_by: "text" },
  text: `SELECT version, body, created_at, created_by FROM attestation_policy_versions WHERE policy_id = $1::uuid ORDER BY version DESC`,
});

/** The clusters naming each of the policies $1. */
export const POLICY_CLUSTERS = statement("attestation.policy-clusters", {
  params: ["uuid[]"],
  columns: { policy_id: "uuid", id: "uuid", name: "text" },
  text: `
    SELECT s.attestation_policy_id AS policy_id, c.id, c.name FROM cluster_handover_settings s JOIN clusters c ON c.id = s.cluster_id
     WHERE s.attestation_policy_id = ANY($1::uuid[]) ORDER BY c.name`,
});

/**
 * The policy a node ($1) is attested against, at its current version: the one naming the image
 * the node was last provisioned with, else its cluster's. No row: none applies (or attestation is
 * off for the cluster, which `attestation` says).
 */
export const POLICY_FOR_NODE = statement("attestation.policy-for-node", {
  params: ["uuid"],
  columns: { attestation: "text", policy_id: "uuid?", name: "text?", version: "int4?", body: "jsonb?", image: "text?" },
  text: `
    WITH node AS (
      SELECT n.id, n.cluster_id, COALESCE(s.attestation, 'required') AS attestation, s.attestation_policy_id,
             (SELECT w.details->>'image_url' FROM node_workflows w
               WHERE w.node_id = n.id AND w.kind = 'provisioning' AND w.status IN ('running', 'succeeded')
               ORDER BY w.started_at DESC LIMIT 1) AS image
        FROM nodes n LEFT JOIN cluster_handover_settings s ON s.cluster_id = n.cluster_id
       WHERE n.id = $1::uuid
    ), chosen AS (
      SELECT COALESCE(
        (SELECT p.id FROM attestation_policies p JOIN attestation_policy_versions v ON v.policy_id = p.id AND v.version = p.current_version, node
          WHERE node.image IS NOT NULL AND v.body->'images' ? node.image ORDER BY lower(p.name) LIMIT 1),
        (SELECT attestation_policy_id FROM node)) AS policy_id
    )
    SELECT node.attestation, p.id AS policy_id, p.name, p.current_version AS version, v.body, node.image
      FROM node CROSS JOIN chosen
      LEFT JOIN attestation_policies p ON p.id = chosen.policy_id
      LEFT JOIN attestation_policy_versions v ON v.policy_id = p.id AND v.version = p.current_version`,
});

// ---- signing keys -------------------------------------------------------------------------------

export const REGISTER_SIGNING_KEY = statement("attestation.register-signing-key", {
  params: ["text", "jsonb"],
  columns: {},
  text: `INSERT INTO attestation_signing_keys (kid, public_jwk) VALUES ($1::text, $2::jsonb) ON CONFLICT (kid) DO NOTHING`,
});

export const SIGNING_KEYS = statement("attestation.signing-keys", {
  params: [],
  columns: { kid: "text", public_jwk: "jsonb", first_used_at: "timestamptz" },
  text: `SELECT kid, public_jwk, first_used_at FROM attestation_signing_keys ORDER BY first_used_at DESC, kid`,
});

// ---- verdicts -----------------------------------------------------------------------------------

const VERDICT_COLUMNS = {
  id: "uuid",
  node_id: "uuid",
  workflow_id: "uuid?",
  nonce: "text?",
  result: "text",
  failures: "jsonb",
  policy_id: "uuid?",
  policy_name: "text?",
  policy_version: "int4?",
  pcr_digest: "text?",
  tpm_kind: "text?",
  kid: "text",
  jws: "text",
  created_at: "timestamptz",
} as const;
const VERDICT_SELECT = `id, node_id, workflow_id, nonce, result, failures, policy_id, policy_name, policy_version, pcr_digest, tpm_kind, kid, jws, created_at`;

export const INSERT_ATTESTATION = statement("attestation.insert-verdict", {
  params: ["uuid", "uuid", "uuid?", "text?", "text", "jsonb", "uuid?", "text?", "int4?", "text?", "text?", "text", "text", "timestamptz"],
  columns: VERDICT_COLUMNS,
  text: `
    INSERT INTO attestations (id, node_id, workflow_id, nonce, result, failures, policy_id, policy_name, policy_version, pcr_digest, tpm_kind, kid, jws, created_at)
    VALUES ($1::uuid, $2::uuid, $3::uuid, $4::text, $5::text, $6::jsonb, $7::uuid, $8::text, $9::int4, $10::text, $11::text, $12::text, $13::text, $14::timestamptz)
    RETURNING ${VERDICT_SELECT}`,
});

export const INSERT_EVIDENCE = statement("attestation.insert-evidence", {
  params: ["uuid", "uuid", "bytea?", "bytea?", "jsonb?", "bytea?", "jsonb?", "jsonb?"],
  columns: {},
  text: `
    INSERT INTO attestation_evidence (attestation_id, node_id, quote, signature, pcrs, event_log, wipe_report, gpu_reports)
    VALUES ($1::uuid, $2::uuid, $3::bytea, $4::bytea, $5::jsonb, $6::bytea, $7::jsonb, $8::jsonb)`,
});

/** The node's ($1) verdicts, newest first, after the cursor ($3 time, $4 id), at most $2 (+1 to tell a next page). */
export const VERDICTS_OF_NODE = statement("attestation.verdicts-of-node", {
  params: ["uuid", "int4", "timestamptz?", "uuid?"],
  columns: VERDICT_COLUMNS,
  text: `
    SELECT ${VERDICT_SELECT} FROM attestations
     WHERE node_id = $1::uuid AND ($3::timestamptz IS NULL OR (created_at, id) < ($3::timestamptz, $4::uuid))
     ORDER BY created_at DESC, id DESC LIMIT $2::int4 + 1`,
});

/** The latest verdict of the workflow ($1). */
export const LATEST_VERDICT_OF_WORKFLOW = statement("attestation.latest-verdict-of-workflow", {
  params: ["uuid"],
  columns: VERDICT_COLUMNS,
  text: `SELECT ${VERDICT_SELECT} FROM attestations WHERE workflow_id = $1::uuid ORDER BY created_at DESC, id DESC LIMIT 1`,
});

/** The latest verdict of each node of $1. */
export const LATEST_VERDICTS = statement("attestation.latest-verdicts", {
  params: ["uuid[]"],
  columns: VERDICT_COLUMNS,
  text: `SELECT DISTINCT ON (node_id) ${VERDICT_SELECT} FROM attestations WHERE node_id = ANY($1::uuid[]) ORDER BY node_id, created_at DESC, id DESC`,
});

/** Whether the tenant ($2) ever received the node ($1): a holding of its reservations that began. */
export const TENANT_RECEIVED_NODE = statement("attestation.tenant-received-node", {
  params: ["uuid", "uuid"],
  columns: { received: "bool" },
  text: `SELECT EXISTS (SELECT 1 FROM reservation_nodes WHERE node_id = $1::uuid AND tenant_id = $2::uuid AND live AND starts_at <= now()) AS received`,
});

/** The evidence of a verdict ($1). */
export const EVIDENCE_OF = statement("attestation.evidence-of", {
  params: ["uuid"],
  columns: { pcrs: "jsonb?", event_log: "bytea?", wipe_report: "jsonb?", gpu_reports: "jsonb?" },
  text: `SELECT pcrs, event_log, wipe_report, gpu_reports FROM attestation_evidence WHERE attestation_id = $1::uuid`,
});
