import { statement } from "@/lib/db/statement";

// The public API's statements (lib/db/statement.ts), over the public_api views only (its role can
// read nothing else), checked against the migrated database by tests/integration/sql-statements.test.ts.

/** Every node of the public view with the GPUs work holds on it. */
export const PUBLIC_FLEET_NODES = statement("public-api.fleet-nodes", {
  params: [],
  columns: {
    cluster_id: "uuid",
    cluster_name: "text",
    region: "text?",
    status: "text",
    gpu_type: "text",
    gpus: "int4",
    healthy: "int4",
    busy: "int4",
  },
  text: `SELECT n.cluster_id, n.cluster_name, n.region, n.status, n.gpu_type, n.gpus, n.healthy, COALESCE(w.busy, 0)::int AS busy
       FROM public_api.nodes n LEFT JOIN (SELECT node_id, sum(gpus) AS busy FROM public_api.node_work GROUP BY node_id) w ON w.node_id = n.node_id
      ORDER BY n.cluster_name`,
});

/** The latest $1 remediations, since $2 (NULL: any time). */
export const PUBLIC_REMEDIATIONS = statement("public-api.remediations", {
  params: ["int8", "timestamptz?"],
  columns: { id: "text", created_at: "timestamptz", cluster_name: "text", pod: "text?", action: "text", outcome: "text", cause: "text" },
  text: `SELECT id::text, created_at, cluster_name, pod, action, outcome, cause FROM public_api.remediations
      WHERE ($2::timestamptz IS NULL OR created_at >= $2) ORDER BY created_at DESC LIMIT $1`,
});

/** The node's ($1) latest verdict. */
export const PUBLIC_LATEST_ATTESTATION = statement("public-api.latest-attestation", {
  params: ["uuid"],
  columns: {
    id: "uuid",
    node_id: "uuid",
    result: "text",
    policy_name: "text?",
    policy_version: "int4?",
    kid: "text",
    jws: "text",
    created_at: "timestamptz",
  },
  text: `SELECT id, node_id, result, policy_name, policy_version, kid, jws, created_at FROM public_api.node_attestations
      WHERE node_id = $1::uuid ORDER BY created_at DESC, id DESC LIMIT 1`,
});

/** Every key that ever signed a verdict, the latest first. */
export const PUBLIC_ATTESTATION_KEYS = statement("public-api.attestation-keys", {
  params: [],
  columns: { kid: "text", public_jwk: "jsonb" },
  text: `SELECT kid, public_jwk FROM public_api.attestation_keys ORDER BY first_used_at DESC, kid`,
});
