import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { pool } from "@/lib/db/client";
import { forbidden, unauthorized } from "@/lib/errors";
import { hashApiKey, isWellFormedApiKey } from "./key-format";

const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Resolves a Bearer key to its principal. Revocation is effective on the next request: there is
 * no cache between the database and this check. last_used_at is written at most once a minute
 * per key so hot agent paths do not turn every request into a write.
 */
export async function authenticateApiKey(key: string): Promise<Principal> {
  if (!isWellFormedApiKey(key)) throw unauthorized("Invalid API key");
  // Every API request passes here: one indexed query over the pool, planned once per connection.
  const { rows } = await pool().query<{
    id: string; prefix: string; scope: string; tenant_id: string | null; cluster_id: string | null;
    revoked_at: Date | null; last_used_at: Date | null; tenant_status: string | null;
  }>({
    name: "authenticate_api_key",
    text: `SELECT k.id, k.prefix, k.scope, k.tenant_id, k.cluster_id, k.revoked_at, k.last_used_at, t.status AS tenant_status
             FROM api_keys k LEFT JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = $1`,
    values: [hashApiKey(key)],
  });
  const row = rows[0];
  if (!row || row.revoked_at) throw unauthorized("Invalid or revoked API key");
  if (row.tenant_status !== null && row.tenant_status !== "active") throw forbidden("Tenant is suspended");

  if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > LAST_USED_RESOLUTION_MS) {
    await pool().query(
      `UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [row.id],
    );
  }

  const via = { keyId: row.id, label: `key ${row.prefix}…` };
  switch (row.scope) {
    case "operator":
      return { kind: "operator", ...via };
    case "tenant":
      return { kind: "tenant", tenantId: row.tenant_id!, role: "tenant_admin", ...via };
    case "agent":
      return { kind: "agent", clusterId: row.cluster_id!, ...via };
    default:
      throw unauthorized("Invalid API key");
  }
}
