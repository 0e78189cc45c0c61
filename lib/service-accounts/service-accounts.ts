import "server-only";
import { forgetRememberedKeys } from "@/lib/api-keys/authenticate-api-key";
import { assertTenantAdminOrOperator, type Actor, type Principal } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db, type Tx } from "@/lib/db/client";
import { conflict, notFound, validationFailed } from "@/lib/errors";
import { forgetGatewayKeys } from "@/lib/gateway/gateway-keys";
import { oneOf } from "@/lib/vocabulary";
import { SERVICE_ACCOUNT_ROLES, type CreateServiceAccountInput, type ServiceAccountJson } from "./schemas";

const select = {
  id: true,
  tenantId: true,
  name: true,
  role: true,
  description: true,
  createdBy: true,
  createdAt: true,
  disabledAt: true,
} as const;

type Row = {
  id: string;
  tenantId: string | null;
  name: string;
  role: string;
  description: string | null;
  createdBy: string;
  createdAt: Date;
  disabledAt: Date | null;
};

function json(r: Row, keysInUse: number): ServiceAccountJson {
  return {
    id: r.id,
    tenant_id: r.tenantId,
    name: r.name,
    role: oneOf(SERVICE_ACCOUNT_ROLES, r.role, "service_accounts.role"),
    description: r.description,
    created_by: r.createdBy,
    created_at: r.createdAt.toISOString(),
    disabled_at: r.disabledAt?.toISOString() ?? null,
    keys_in_use: keysInUse,
  };
}

/** Service accounts a caller may see: a tenant admin its tenant's, an operator every one. */
export async function listServiceAccounts(p: Principal, opts: { tenant_id?: string; include_disabled?: "true" | "false" } = {}) {
  assertTenantAdminOrOperator(p);
  const tenantId = p.kind === "tenant" ? p.tenantId : opts.tenant_id;
  const rows = await db().serviceAccount.findMany({
    where: { ...(tenantId ? { tenantId } : {}), ...(opts.include_disabled === "true" ? {} : { disabledAt: null }) },
    orderBy: [{ disabledAt: { sort: "desc", nulls: "first" } }, { name: "asc" }],
    take: 1_000,
    select,
  });
  const live = { revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }] };
  const ids = rows.map((r) => r.id);
  const [api, endpoint] = await Promise.all([
    db().apiKey.groupBy({ by: ["serviceAccountId"], where: { serviceAccountId: { in: ids }, ...live }, _count: true }),
    db().endpointKey.groupBy({ by: ["serviceAccountId"], where: { serviceAccountId: { in: ids }, ...live }, _count: true }),
  ]);
  const count = new Map<string, number>();
  for (const g of [...api, ...endpoint]) count.set(g.serviceAccountId!, (count.get(g.serviceAccountId!) ?? 0) + g._count);
  return rows.map((r) => json(r, count.get(r.id) ?? 0));
}

/** A service account a caller may see, or 404 (another tenant's does not exist for it). */
export async function getServiceAccountOrThrow(p: Principal, id: string, tx: Tx | ReturnType<typeof db> = db()) {
  assertTenantAdminOrOperator(p);
  const row = await tx.serviceAccount.findFirst({ where: { id, ...(p.kind === "tenant" ? { tenantId: p.tenantId } : {}) }, select });
  if (!row) throw notFound("Service account");
  return row;
}

/**
 * Creates a service account. Tenant admins make accounts of their own tenant with a tenant role;
 * operators make platform accounts (role operator, no tenant) or a tenant's.
 */
export async function createServiceAccount(actor: Actor, input: CreateServiceAccountInput) {
  const p = actor.principal;
  assertTenantAdminOrOperator(p);
  let tenantId: string | null;
  if (p.kind === "tenant") {
    if (input.role === "operator") throw validationFailed([{ path: "role", message: "A tenant's service account has a tenant role" }]);
    if (input.tenant_id && input.tenant_id !== p.tenantId) throw notFound("Tenant");
    tenantId = p.tenantId;
  } else if (input.role === "operator") {
    if (input.tenant_id) throw validationFailed([{ path: "tenant_id", message: "Operator accounts belong to no tenant" }]);
    tenantId = null;
  } else {
    if (!input.tenant_id) throw validationFailed([{ path: "tenant_id", message: "Required for a tenant role" }]);
    if (!(await db().tenant.count({ where: { id: input.tenant_id } })))
      throw validationFailed([{ path: "tenant_id", message: "No such tenant" }]);
    tenantId = input.tenant_id;
  }
  return db().$transaction(async (tx) => {
    const taken = await tx.serviceAccount.findFirst({ where: { tenantId, name: input.name }, select: { id: true } });
    if (taken) throw conflict("A service account of that name exists", [{ path: "name", message: "Taken: pick another name" }]);
    const row = await tx.serviceAccount.create({
      data: {
        tenantId,
        name: input.name,
        role: input.role,
        description: input.description ?? null,
        createdByUserId: "userId" in p ? (p.userId ?? null) : null,
        createdBy: p.label,
      },
      select,
    });
    await recordAudit(tx, actor, {
      action: "service_account.created",
      targetType: "service_account",
      targetId: row.id,
      tenantId,
      details: { name: row.name, role: row.role },
    });
    return json(row, 0);
  });
}

/**
 * Disables a service account: every key it owns is revoked in the same transaction (the database
 * does it, see migration 20261201010000_key_owners) and stops working at once. Final: a disabled
 * account stays disabled. Disabling twice changes nothing.
 */
export async function disableServiceAccount(actor: Actor, id: string) {
  const p = actor.principal;
  const row = await db().$transaction(async (tx) => {
    const found = await getServiceAccountOrThrow(p, id, tx);
    if (found.disabledAt) return found;
    const revoked = await tx.apiKey.count({ where: { serviceAccountId: id, revokedAt: null } });
    const updated = await tx.serviceAccount.update({ where: { id }, data: { disabledAt: new Date() }, select });
    await recordAudit(tx, actor, {
      action: "service_account.disabled",
      targetType: "service_account",
      targetId: id,
      tenantId: found.tenantId,
      details: { name: found.name, api_keys_revoked: revoked },
    });
    return updated;
  });
  // this process forgets at once; the others when the database's notification reaches them
  forgetRememberedKeys();
  forgetGatewayKeys();
  return json(row, 0);
}

/**
 * The platform's own account for keys it makes (the command line, the seed, a provider's start
 * script): named after what made them, of the tenant a tenant key is for or of the platform, made
 * on first use and shown to admins like any other. One an admin disabled stays disabled, and the
 * key is then refused by the database.
 */
export async function platformServiceAccount(tx: Tx, name: string, tenantId: string | null): Promise<string> {
  const label = name.trim().slice(0, 100) || "platform";
  const found = await tx.serviceAccount.findFirst({ where: { tenantId, name: label }, select: { id: true } });
  if (found) return found.id;
  await tx.$executeRaw`INSERT INTO service_accounts (tenant_id, name, role, created_by, description)
      VALUES (${tenantId}::uuid, ${label}, ${tenantId ? "tenant_admin" : "operator"}, 'the platform', 'Keys the platform made for itself')
      ON CONFLICT DO NOTHING`;
  return (await tx.serviceAccount.findFirstOrThrow({ where: { tenantId, name: label }, select: { id: true } })).id;
}
