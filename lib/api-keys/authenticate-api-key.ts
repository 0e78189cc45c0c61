import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
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
  const row = await db().apiKey.findUnique({
    where: { keyHash: hashApiKey(key) },
    select: {
      id: true,
      prefix: true,
      scope: true,
      tenantId: true,
      clusterId: true,
      revokedAt: true,
      lastUsedAt: true,
      tenant: { select: { status: true } },
    },
  });
  if (!row || row.revokedAt) throw unauthorized("Invalid or revoked API key");
  if (row.tenant && row.tenant.status !== "active") throw forbidden("Tenant is suspended");

  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    await db().$executeRaw`UPDATE api_keys SET last_used_at = now()
      WHERE id = ${row.id}::uuid AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`;
  }

  const via = { keyId: row.id, label: `key ${row.prefix}…` };
  switch (row.scope) {
    case "operator":
      return { kind: "operator", ...via };
    case "tenant":
      return { kind: "tenant", tenantId: row.tenantId!, role: "tenant_admin", ...via };
    case "agent":
      return { kind: "agent", clusterId: row.clusterId!, ...via };
    default:
      throw unauthorized("Invalid API key");
  }
}
