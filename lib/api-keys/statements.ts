import { statement } from "@/lib/db/statement";

// API keys' raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts.

/**
 * The key of the hash $1 with its own rights and its owner's as they are now (a key of a person or
 * a service account since disabled is refused, one of a tenant admin since demoted acts as a
 * member). Runs on every uncached call: prepared.
 */
export const API_KEY_BY_HASH = statement("api-keys.by-hash", {
  params: ["text"],
  columns: {
    id: "uuid",
    prefix: "text",
    scope: "text",
    tenant_id: "uuid?",
    cluster_id: "uuid?",
    node_id: "uuid?",
    tenant_role: "text?",
    revoked_at: "timestamptz?",
    last_used_at: "timestamptz?",
    tenant_status: "text?",
    owner_disabled: "bool",
    owner_role: "text?",
    expires_at: "timestamptz?",
    expired: "bool",
  },
  prepare: true,
  text: `SELECT k.id, k.prefix, k.scope, k.tenant_id, k.cluster_id, k.node_id, k.tenant_role, k.revoked_at, k.last_used_at, t.status AS tenant_status,
                  COALESCE(u.disabled_at, s.disabled_at) IS NOT NULL OR (u.id IS NULL AND s.id IS NULL) AS owner_disabled,
                  COALESCE(u.role, s.role) AS owner_role,
                  k.expires_at, COALESCE(k.expires_at <= now(), false) AS expired
             FROM api_keys k LEFT JOIN tenants t ON t.id = k.tenant_id
                  LEFT JOIN users u ON u.id = k.owner_user_id LEFT JOIN service_accounts s ON s.id = k.service_account_id
            WHERE k.key_hash = $1`,
});

/** Marks the API key $1 used (at most once a minute). */
export const TOUCH_API_KEY = statement("api-keys.touch", {
  params: ["uuid"],
  columns: {},
  text: `UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
});
