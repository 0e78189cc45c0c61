import "server-only";
import { assertTenantAdminOrOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import { forgetRememberedKeys } from "./authenticate-api-key";
import { apiKeySelect } from "./schemas";

/**
 * Revokes a key; the next request made with it is refused (other processes forget it when the
 * database's notification reaches them, milliseconds after the commit). Revoking twice changes nothing.
 */
export async function revokeApiKey(actor: Actor, id: string) {
  const p = actor.principal;
  assertTenantAdminOrOperator(p);
  const revoked = await db().$transaction(async (tx) => {
    const key = await tx.apiKey.findFirst({
      where: { id, ...(p.kind === "tenant" ? { tenantId: p.tenantId } : {}) },
      select: apiKeySelect,
    });
    if (!key) throw notFound("API key");
    if (key.revokedAt) return key;
    const revoked = await tx.apiKey.update({ where: { id }, data: { revokedAt: new Date() }, select: apiKeySelect });
    await recordAudit(tx, actor, {
      action: "api_key.revoked",
      targetType: "api_key",
      targetId: id,
      tenantId: key.tenantId,
      details: { name: key.name, prefix: key.prefix, scope: key.scope },
    });
    return revoked;
  });
  forgetRememberedKeys();
  return revoked;
}
