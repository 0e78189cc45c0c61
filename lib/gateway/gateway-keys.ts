import "server-only";
import { hashApiKey, isWellFormedApiKey } from "@/lib/api-keys/key-format";
import { RememberedKeys } from "@/lib/api-keys/remembered-keys";
import { TOUCH_API_KEY } from "@/lib/api-keys/statements";
import { pool } from "@/lib/db/client";
import { ChannelListener } from "@/lib/db/listen";
import { run } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { forbidden, unauthorized } from "@/lib/errors";
import { GATEWAY_CALLER, TOUCH_ENDPOINT_KEY } from "./statements";

// Who calls an endpoint through the gateway: a tenant key (any endpoint of its tenant) or an
// endpoint key (that one endpoint). Operators' and agents' keys call no endpoint: the gateway
// carries tenants' traffic only. Checked keys are remembered for API_KEY_CACHE_TTL_S, and only
// while this process hears the database's `api_keys_changed` (revoking or expiring an API key or
// an endpoint key, suspending a tenant, disabling a user, deleting an endpoint all send it), so a
// revoked key stops working as soon as the notification lands, and at most after the TTL if the
// listening connection dies silently (then nothing remembered is trusted at all).

export interface GatewayCaller {
  tenantId: string;
  /** an endpoint key: the one endpoint it may call; null for a tenant key */
  endpointId: string | null;
  keyId: string;
}

const LAST_USED_RESOLUTION_MS = 60_000;

const globalForKeys = globalThis as unknown as { gatewayKeys?: { keys: RememberedKeys<GatewayCaller>; listener: ChannelListener } };

function remembered(): RememberedKeys<GatewayCaller> | null {
  const ttlMs = env().API_KEY_CACHE_TTL_S * 1000;
  if (ttlMs === 0) return null;
  if (!globalForKeys.gatewayKeys) {
    const listener: ChannelListener = new ChannelListener("api_keys_changed", {
      onNotify: () => keys.forget(),
      onLost: () => keys.forget(),
    });
    const keys = new RememberedKeys<GatewayCaller>({ ttlMs, maxEntries: 100_000, trusted: () => listener.live });
    globalForKeys.gatewayKeys = { keys, listener };
  }
  globalForKeys.gatewayKeys.listener.start();
  return globalForKeys.gatewayKeys.keys;
}

/** The caller behind `Authorization: Bearer <key>`; 401 for no or a bad key, 403 for a key that calls no endpoint. */
export async function authenticateGatewayCaller(authorization: string | undefined): Promise<GatewayCaller> {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
  if (!bearer)
    throw unauthorized("Send 'Authorization: Bearer <key>': a tenant key of the endpoint's tenant, or one of the endpoint's own keys");
  if (!isWellFormedApiKey(bearer)) throw unauthorized("Invalid key");
  const hash = hashApiKey(bearer);
  const cache = remembered();
  const known = cache?.recall(hash);
  if (known) return known;
  const ticket = cache?.ticket() ?? null;
  const rows = await run(pool(), GATEWAY_CALLER, [hash]);
  const row = rows[0];
  if (!row) throw unauthorized("Invalid, revoked or expired key");
  if (row.kind !== "endpoint" && row.kind !== "tenant")
    throw forbidden("The gateway serves tenants' traffic: use a tenant key of the endpoint's tenant, or an endpoint key");
  if (!row.active) throw row.kind === "endpoint" ? unauthorized("Invalid, revoked or expired key") : forbidden("Tenant is suspended");
  if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > LAST_USED_RESOLUTION_MS) {
    await run(pool(), row.kind === "endpoint" ? TOUCH_ENDPOINT_KEY : TOUCH_API_KEY, [row.id]);
  }
  const caller: GatewayCaller = { tenantId: row.tenant_id!, endpointId: row.endpoint_id, keyId: row.id };
  cache?.remember(ticket, hash, caller, row.expires_at?.getTime() ?? null);
  return caller;
}

/** Forgets every remembered gateway key of this process (a revocation here; others hear the database). */
export function forgetGatewayKeys(): void {
  globalForKeys.gatewayKeys?.keys.forget();
}
