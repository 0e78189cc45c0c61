import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { db } from "@/lib/db/client";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { apiKeyJson, apiKeySelect, keyOwnerJson, type ApiKeyRow, type KeyScope, type OwnerNames } from "./schemas";

export async function listApiKeys(
  principal: Principal,
  opts: {
    limit: number;
    cursor?: string;
    scope?: KeyScope;
    tenant_id?: string;
    include_revoked?: "true" | "false";
    created_by_user_id?: string;
    owner_user_id?: string;
    service_account_id?: string;
    /** a person's or a service account's id: the keys it owns */
    owner?: string;
  },
) {
  const scope = tenantScope(principal);
  const tenantId = scope.tenantId ?? opts.tenant_id;
  const rows = await db().apiKey.findMany({
    where: {
      ...(tenantId ? { tenantId } : {}),
      ...(opts.scope ? { scope: opts.scope } : {}),
      ...(opts.created_by_user_id ? { createdByUserId: opts.created_by_user_id } : {}),
      ...(opts.owner_user_id ? { ownerUserId: opts.owner_user_id } : {}),
      ...(opts.service_account_id ? { serviceAccountId: opts.service_account_id } : {}),
      // beside the cursor's own OR
      ...(opts.owner ? { AND: [{ OR: [{ ownerUserId: opts.owner }, { serviceAccountId: opts.owner }] }] } : {}),
      ...(opts.include_revoked === "true" ? {} : { revokedAt: null }),
      ...afterCursor(decodeCursor(opts.cursor)),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
    select: { ...apiKeySelect, tenant: { select: { name: true } }, cluster: { select: { name: true } } },
  });
  return page(rows, opts.limit);
}

/** The names of the people and service accounts who own these keys (emails, account names), with their roles. */
export async function ownerNames(rows: Array<{ ownerUserId: string | null; serviceAccountId: string | null }>): Promise<OwnerNames> {
  const users = [...new Set(rows.flatMap((r) => (r.ownerUserId ? [r.ownerUserId] : [])))];
  const accounts = [...new Set(rows.flatMap((r) => (r.serviceAccountId ? [r.serviceAccountId] : [])))];
  const [u, a] = await Promise.all([
    users.length ? db().user.findMany({ where: { id: { in: users } }, select: { id: true, email: true, role: true } }) : [],
    accounts.length ? db().serviceAccount.findMany({ where: { id: { in: accounts } }, select: { id: true, name: true, role: true } }) : [],
  ]);
  return new Map([
    ...u.map((x) => [x.id, { name: x.email, role: x.role }] as const),
    ...a.map((x) => [x.id, { name: x.name, role: x.role }] as const),
  ]);
}

/** Keys as the API shows them to this caller, their owners named. */
export async function apiKeysJson(p: Principal, rows: ApiKeyRow[]) {
  const names = await ownerNames(rows);
  return rows.map((k) => apiKeyJson(k, p.kind === "tenant", names));
}

/** Keys with their owner as this caller may see it (the console's tables). */
export async function withOwners<R extends { ownerUserId: string | null; serviceAccountId: string | null }>(p: Principal, rows: R[]) {
  const names = await ownerNames(rows);
  return rows.map((r) => ({ ...r, owner: keyOwnerJson(r, names, p.kind === "tenant") }));
}
