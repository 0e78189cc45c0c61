import "server-only";
import type { Actor, Principal, TenantRole } from "@/lib/auth/principal";
import { TENANT_ROLES } from "@/lib/users/schemas";
import { oneOf } from "@/lib/vocabulary";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { forbidden, notFound } from "@/lib/errors";
import { logger } from "@/lib/logger";
import { open, seal } from "./secret-box";

// Tenants' secrets for pipelines' http steps: written and deleted by tenant admins (operators do not
// handle tenants' credentials), listed by name only, read back in plaintext by nothing but the tool-call
// worker, which puts them into a request's headers as it leaves and nowhere else (no expression ever
// sees one: lib/pipelines/expressions.ts). Each says who may reference it in a pipeline.

function owner(p: Principal): string {
  if (p.kind === "tenant") return p.tenantId;
  throw forbidden("Secrets belong to tenants; only their own members manage them");
}

export async function listSecrets(p: Principal) {
  return db().tenantSecret.findMany({
    where: { tenantId: owner(p) },
    orderBy: { name: "asc" },
    select: { name: true, usableBy: true, createdAt: true, updatedAt: true },
  });
}

export async function putSecret(actor: Actor, name: string, value: string, usableBy: TenantRole = "tenant_admin") {
  const t = owner(actor.principal);
  return db().$transaction(async (tx) => {
    const existed = await tx.tenantSecret.findUnique({ where: { tenantId_name: { tenantId: t, name } }, select: { id: true } });
    const row = await tx.tenantSecret.upsert({
      where: { tenantId_name: { tenantId: t, name } },
      create: { tenantId: t, name, ciphertext: seal(value), usableBy },
      update: { ciphertext: seal(value), usableBy },
      select: { name: true, usableBy: true, createdAt: true, updatedAt: true },
    });
    await recordAudit(tx, actor, {
      action: existed ? "secret.replaced" : "secret.created",
      targetType: "secret",
      targetId: name,
      tenantId: t,
      details: { name, usable_by: usableBy },
    });
    return { created: !existed, secret: row };
  });
}

export async function deleteSecret(actor: Actor, name: string) {
  const t = owner(actor.principal);
  await db().$transaction(async (tx) => {
    const gone = await tx.tenantSecret.deleteMany({ where: { tenantId: t, name } });
    if (gone.count === 0) throw notFound("Secret");
    await recordAudit(tx, actor, { action: "secret.deleted", targetType: "secret", targetId: name, tenantId: t, details: { name } });
  });
}

/**
 * The plaintext of a tenant's secrets: for the tool-call worker only. A secret sealed under another
 * app secret (NEXTAUTH_SECRET was changed) cannot be read: it is left out, and a step using it
 * fails naming it, rather than the worker failing every tenant's calls.
 */
export async function secretValues(
  tenantId: string,
  names?: readonly string[],
): Promise<Record<string, { value: string; usableBy: TenantRole }>> {
  const rows = await db().tenantSecret.findMany({
    where: { tenantId, ...(names ? { name: { in: [...names] } } : {}) },
    select: { name: true, ciphertext: true, usableBy: true },
  });
  const out: Record<string, { value: string; usableBy: TenantRole }> = {};
  for (const r of rows) {
    try {
      out[r.name] = { value: open(r.ciphertext), usableBy: oneOf(TENANT_ROLES, r.usableBy, "tenant_secrets.usable_by") };
    } catch {
      logger.warn("a tenant secret cannot be decrypted with this app's secret; set it again", { tenant_id: tenantId, name: r.name });
    }
  }
  return out;
}
