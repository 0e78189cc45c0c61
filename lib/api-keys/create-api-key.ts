import "server-only";
import { assertTenantAdminOrOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { forbidden, validationFailed } from "@/lib/errors";
import { displayPrefix, generateApiKey, hashApiKey } from "./key-format";
import { resolveKeyOwner } from "./key-owner";
import { apiKeySelect, type CreateApiKeyInput } from "./schemas";

/**
 * Creates a key and returns it in full exactly once; only its SHA-256 is stored. Operators mint
 * keys of every scope; tenant admins mint tenant keys for their own tenant only. The key acts for
 * its owner (lib/api-keys/key-owner.ts) and never for more than the owner may do now.
 */
export async function createApiKey(actor: Actor, request: CreateApiKeyInput) {
  let input = request;
  const p = actor.principal;
  assertTenantAdminOrOperator(p);
  let tenantId: string | null = null;
  let clusterId: string | null = null;
  let nodeId: string | null = null;
  if (input.node_id && input.scope !== "agent")
    throw validationFailed([{ path: "node_id", message: "Only agent keys are bound to a node" }]);

  // a tenant's service account owns keys of its tenant: an operator need not name the tenant twice
  const accountTenant = input.service_account_id
    ? ((await db().serviceAccount.findUnique({ where: { id: input.service_account_id }, select: { tenantId: true } }))?.tenantId ?? null)
    : null;
  if (p.kind === "operator" && input.scope === "tenant" && !input.tenant_id && accountTenant)
    input = { ...input, tenant_id: accountTenant };

  if (p.kind === "tenant") {
    if (input.scope !== "tenant") throw forbidden("Tenant admins can only create tenant keys");
    if (input.tenant_id && input.tenant_id !== p.tenantId) throw forbidden("Keys can only be created for your own tenant");
    if (input.cluster_id) throw validationFailed([{ path: "cluster_id", message: "Only agent keys name a cluster" }]);
    tenantId = p.tenantId;
  } else if (input.scope === "tenant") {
    if (!input.tenant_id) throw validationFailed([{ path: "tenant_id", message: "Required for tenant keys" }]);
    if (input.cluster_id) throw validationFailed([{ path: "cluster_id", message: "Only agent keys name a cluster" }]);
    if (!(await db().tenant.count({ where: { id: input.tenant_id } }))) {
      throw validationFailed([{ path: "tenant_id", message: "No such tenant" }]);
    }
    tenantId = input.tenant_id;
  } else if (input.scope === "agent") {
    if (!input.cluster_id) throw validationFailed([{ path: "cluster_id", message: "Required for agent keys" }]);
    if (input.tenant_id) throw validationFailed([{ path: "tenant_id", message: "Agent keys belong to a cluster, not a tenant" }]);
    if (!(await db().cluster.count({ where: { id: input.cluster_id } }))) {
      throw validationFailed([{ path: "cluster_id", message: "No such cluster" }]);
    }
    clusterId = input.cluster_id;
    if (input.node_id) {
      if (!(await db().node.count({ where: { id: input.node_id, clusterId } })))
        throw validationFailed([{ path: "node_id", message: "No such node in that cluster" }]);
      nodeId = input.node_id;
    }
  } else if (input.tenant_id || input.cluster_id) {
    throw validationFailed([
      { path: input.tenant_id ? "tenant_id" : "cluster_id", message: "Operator keys are not bound to a tenant or cluster" },
    ]);
  }

  const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
  if (expiresAt && expiresAt.getTime() <= Date.now()) throw validationFailed([{ path: "expires_at", message: "Must be in the future" }]);
  const key = generateApiKey();
  const apiKey = await db().$transaction(async (tx) => {
    const owner = await resolveKeyOwner(tx, p, { serviceAccountId: input.service_account_id, keyTenantId: tenantId });
    if (owner.role !== "operator" && input.scope !== "tenant")
      throw validationFailed([{ path: "scope", message: "A tenant's service account owns tenant keys only" }]);
    const created = await tx.apiKey.create({
      data: {
        name: input.name,
        scope: input.scope,
        tenantId,
        clusterId,
        nodeId,
        // a key acts with its owner's tenant role at most
        tenantRole: input.scope === "tenant" ? (owner.role === "tenant_member" ? "tenant_member" : "tenant_admin") : null,
        ownerUserId: owner.ownerUserId,
        serviceAccountId: owner.serviceAccountId,
        prefix: displayPrefix(key),
        keyHash: hashApiKey(key),
        createdByUserId: "userId" in p ? (p.userId ?? null) : null,
        expiresAt,
      },
      select: apiKeySelect,
    });
    await recordAudit(tx, actor, {
      action: "api_key.created",
      targetType: "api_key",
      targetId: created.id,
      tenantId,
      details: {
        name: created.name,
        scope: created.scope,
        prefix: created.prefix,
        cluster_id: clusterId,
        ...(nodeId ? { node_id: nodeId } : {}),
        ...(owner.serviceAccountId ? { service_account_id: owner.serviceAccountId } : { owner_user_id: owner.ownerUserId }),
        expires_at: expiresAt?.toISOString() ?? null,
      },
    });
    return created;
  });
  return { apiKey, key };
}
