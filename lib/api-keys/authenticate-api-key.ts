import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { pool } from "@/lib/db/client";
import { ChannelListener } from "@/lib/db/listen";
import { run } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { forbidden, unauthorized } from "@/lib/errors";
import { hashApiKey, isWellFormedApiKey } from "./key-format";
import { RememberedKeys } from "./remembered-keys";
import { API_KEY_BY_HASH, TOUCH_API_KEY } from "./statements";

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
    const listener: ChannelListener = new ChannelListener("api_keys_changed", {
      onNotify: () => keys.forget(),
      onLost: () => keys.forget(),
    });
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
  // The key's own rights, narrowed by its owner's as they are now: a key of a person or service
  // account since disabled is refused, one of a tenant admin since demoted acts as a member (the
  // database also revokes and narrows such keys when the owner changes; this is the second lock).
  const rows = await run(pool(), API_KEY_BY_HASH, [keyHash]);
  const row = rows[0];
  if (!row || row.revoked_at || row.owner_disabled) throw unauthorized("Invalid or revoked API key");
  if (row.expired) throw unauthorized("API key expired");
  if (row.tenant_status !== null && row.tenant_status !== "active") throw forbidden("Tenant is suspended");

  if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > LAST_USED_RESOLUTION_MS) {
    await run(pool(), TOUCH_API_KEY, [row.id]);
  }

  const via = { keyId: row.id, label: `key ${row.prefix}…` };
  switch (row.scope) {
    case "operator":
      return { kind: "operator", ...via };
    case "tenant":
      return {
        kind: "tenant",
        tenantId: row.tenant_id!,
        role: row.tenant_role === "tenant_admin" && row.owner_role !== "tenant_member" ? "tenant_admin" : "tenant_member",
        ...via,
      };
    case "agent": {
      const agent = { kind: "agent" as const, clusterId: row.cluster_id!, ...(row.node_id ? { nodeId: row.node_id } : {}), ...via };
      remembered?.remember(ticket, keyHash, agent, row.expires_at?.getTime() ?? null);
      return agent;
    }
    default:
      throw unauthorized("Invalid API key");
  }
}
