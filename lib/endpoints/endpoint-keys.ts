import "server-only";
import type { z } from "zod";
import { displayPrefix, generateApiKey, hashApiKey } from "@/lib/api-keys/key-format";
import { resolveKeyOwner } from "@/lib/api-keys/key-owner";
import { ownerNames } from "@/lib/api-keys/queries";
import { keyOwnerJson, type OwnerNames } from "@/lib/api-keys/schemas";
import { assertTenantAdminOrOperator, type Actor, type Principal } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import type { Prisma } from "@/lib/generated/prisma/client";
import { notFound, validationFailed } from "@/lib/errors";
import { forgetGatewayKeys } from "@/lib/gateway/gateway-keys";
import { getEndpointOrThrow } from "./get-endpoint";
import type { CreateEndpointKeyInput, endpointKeyJsonSchema } from "./schemas";

// Keys for one endpoint: what a tenant hands to an application that should call this model and
// nothing else. They authenticate at the inference gateway only (no API operation accepts them),
// are shown in full once, stored as their SHA-256, and stop working when revoked, when they expire,
// when the endpoint is deleted, and when their owner (the person who made them, the owner of the key
// they were made with, or a service account) is disabled.

const keySelect = {
  id: true,
  endpointId: true,
  name: true,
  prefix: true,
  createdBy: true,
  ownerUserId: true,
  serviceAccountId: true,
  createdAt: true,
  expiresAt: true,
  lastUsedAt: true,
  revokedAt: true,
} as const;
type KeyRow = Prisma.EndpointKeyGetPayload<{ select: typeof keySelect }>;

function endpointKeyJson(k: KeyRow, names: OwnerNames, forTenant: boolean): z.input<typeof endpointKeyJsonSchema> {
  return {
    id: k.id,
    endpoint_id: k.endpointId,
    name: k.name,
    prefix: k.prefix,
    created_by: k.createdBy,
    owner: keyOwnerJson(k, names, forTenant),
    created_at: k.createdAt.toISOString(),
    expires_at: k.expiresAt?.toISOString() ?? null,
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
  };
}

export async function createEndpointKey(actor: Actor, endpointId: string, input: CreateEndpointKeyInput) {
  const p = actor.principal;
  assertTenantAdminOrOperator(p);
  const endpoint = await getEndpointOrThrow(p, endpointId);
  const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
  if (expiresAt && expiresAt.getTime() <= Date.now()) throw validationFailed([{ path: "expires_at", message: "Must be in the future" }]);
  const key = generateApiKey();
  const row = await db().$transaction(async (tx) => {
    const owner = await resolveKeyOwner(tx, p, { serviceAccountId: input.service_account_id, keyTenantId: endpoint.tenantId });
    const created = await tx.endpointKey.create({
      data: {
        ownerUserId: owner.ownerUserId,
        serviceAccountId: owner.serviceAccountId,
        endpointId,
        tenantId: endpoint.tenantId,
        name: input.name,
        prefix: displayPrefix(key),
        keyHash: hashApiKey(key),
        createdByUserId: "userId" in p ? (p.userId ?? null) : null,
        createdBy: p.label,
        expiresAt,
      },
      select: keySelect,
    });
    await recordAudit(tx, actor, {
      action: "endpoint_key.created",
      targetType: "endpoint",
      targetId: endpointId,
      tenantId: endpoint.tenantId,
      details: { name: input.name, prefix: created.prefix, expires_at: expiresAt?.toISOString() ?? null },
    });
    return created;
  });
  return { endpointKey: endpointKeyJson(row, await ownerNames([row]), p.kind === "tenant"), key };
}

export async function listEndpointKeys(p: Principal, endpointId: string) {
  assertTenantAdminOrOperator(p);
  await getEndpointOrThrow(p, endpointId);
  const rows = await db().endpointKey.findMany({ where: { endpointId }, orderBy: [{ createdAt: "desc" }], take: 500, select: keySelect });
  const names = await ownerNames(rows);
  return rows.map((r) => endpointKeyJson(r, names, p.kind === "tenant"));
}

export async function revokeEndpointKey(actor: Actor, endpointId: string, keyId: string) {
  const p = actor.principal;
  assertTenantAdminOrOperator(p);
  const endpoint = await getEndpointOrThrow(p, endpointId);
  const row = await db().$transaction(async (tx) => {
    const found = await tx.endpointKey.findFirst({ where: { id: keyId, endpointId }, select: { id: true, revokedAt: true } });
    if (!found) throw notFound("Endpoint key");
    const updated = await tx.endpointKey.update({
      where: { id: keyId },
      data: { revokedAt: found.revokedAt ?? new Date() },
      select: keySelect,
    });
    if (!found.revokedAt)
      await recordAudit(tx, actor, {
        action: "endpoint_key.revoked",
        targetType: "endpoint",
        targetId: endpointId,
        tenantId: endpoint.tenantId,
        details: { prefix: updated.prefix },
      });
    return updated;
  });
  // this process forgets at once; the others when the database's notification reaches them
  forgetGatewayKeys();
  return endpointKeyJson(row, await ownerNames([row]), p.kind === "tenant");
}
