import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { pool } from "@/lib/db/client";
import { ChannelListener } from "@/lib/db/listen";
import { env } from "@/lib/env";
import { forbidden, unauthorized } from "@/lib/errors";
import { hashApiKey, isWellFormedApiKey } from "./key-format";
import { RememberedKeys } from "./remembered-keys";

const LAST_USED_RESOLUTION_MS = 60_000;

// Agents' keys are remembered for API_KEY_CACHE_TTL_S, and only while this process listens to
// the database's `api_keys_changed` (a trigger sends it on every revocation, rebinding or
// deletion): the agents' hot paths then skip a round trip per request, and a revoked key is
// refused as soon as the notification arrives — milliseconds after the revocation commits.
// Tenant and operator keys are checked on every request (they also depend on a tenant's status).
const globalForKeys = globalThis as unknown as { rememberedAgentKeys?: { keys: RememberedKeys; listener: ChannelListener } };
function rememberedAgentKeys(): RememberedKeys | null {
  const ttlMs = env().API_KEY_CACHE_TTL_S * 1000;
  if (ttlMs === 0) return null;
  if (!globalForKeys.rememberedAgentKeys) {
    const listener: ChannelListener = new ChannelListener("api_keys_changed", { onNotify: () => keys.forget(), onLost: () => keys.forget() });
    const keys = new RememberedKeys({ ttlMs, maxEntries: 10_000, trusted: () => listener.live });
    globalForKeys.rememberedAgentKeys = { keys, listener };
  }
  const { keys, listener } = globalForKeys.rememberedAgentKeys;
  listener.start();
  return keys;
}

/** Forgets every remembered key at once (a revocation in this process; others hear the database). */
export function forgetRememberedKeys(): void {
  globalForKeys.rememberedAgentKeys?.keys.forget();
}

/**
 * Resolves a Bearer key to its principal. last_used_at is written at most once a minute per key
 * so hot agent paths do not turn every request into a write.
 */
export async function authenticateApiKey(key: string): Promise<Principal> {
  if (!isWellFormedApiKey(key)) throw unauthorized("Invalid API key");
  const keyHash = hashApiKey(key);
  const remembered = rememberedAgentKeys();
  const known = remembered?.recall(keyHash);
  if (known) return known;
  const ticket = remembered?.ticket() ?? null;
  // Every other API request passes here: one indexed query over the pool, planned once per connection.
  // The key's own rights, narrowed by its creator's as they are now: a key made by a user who was
  // since disabled is refused, one made by a tenant admin since demoted acts as a member (the
  // database also revokes and narrows such keys when the user changes; this is the second lock).
  const { rows } = await pool().query<{
    id: string; prefix: string; scope: string; tenant_id: string | null; cluster_id: string | null; node_id: string | null; tenant_role: string | null;
    revoked_at: Date | null; last_used_at: Date | null; tenant_status: string | null; creator_disabled: boolean; creator_role: string | null;
    expires_at: Date | null; expired: boolean;
  }>({
    name: "authenticate_api_key_v4",
    text: `SELECT k.id, k.prefix, k.scope, k.tenant_id, k.cluster_id, k.node_id, k.tenant_role, k.revoked_at, k.last_used_at, t.status AS tenant_status,
                  (u.id IS NOT NULL AND u.disabled_at IS NOT NULL) AS creator_disabled, u.role AS creator_role,
                  k.expires_at, COALESCE(k.expires_at <= now(), false) AS expired
             FROM api_keys k LEFT JOIN tenants t ON t.id = k.tenant_id LEFT JOIN users u ON u.id = k.created_by_user_id
            WHERE k.key_hash = $1`,
    values: [keyHash],
  });
  const row = rows[0];
  if (!row || row.revoked_at || row.creator_disabled) throw unauthorized("Invalid or revoked API key");
  if (row.expired) throw unauthorized("API key expired");
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
      return { kind: "tenant", tenantId: row.tenant_id!, role: row.tenant_role === "tenant_admin" && row.creator_role !== "tenant_member" ? "tenant_admin" : "tenant_member", ...via };
    case "agent": {
      const agent = { kind: "agent" as const, clusterId: row.cluster_id!, ...(row.node_id ? { nodeId: row.node_id } : {}), ...via };
      remembered?.remember(ticket, keyHash, agent, row.expires_at?.getTime() ?? null);
      return agent;
    }
    default:
      throw unauthorized("Invalid API key");
  }
}
