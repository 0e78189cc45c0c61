import "server-only";
import type { OperatorPrincipal, TenantPrincipal } from "@/lib/auth/principal";
import type { Tx } from "@/lib/db/client";
import { validationFailed } from "@/lib/errors";
import { getServiceAccountOrThrow, platformServiceAccount } from "@/lib/service-accounts/service-accounts";

// Who a new key acts for (issue 27): exactly one person or one service account, whose rights as
// they are now cap the key's — the database checks it again (api_keys_creator_guard) and keeps
// every key within its owner's rights from then on (users_keys_follow_owner,
// service_accounts_keys_follow).
//   - a key made in a browser session is its person's;
//   - a key made with a key belongs to that key's owner: a script cannot mint keys that outlive
//     the person whose key it runs with;
//   - a key made for a service account (service_account_id) is that account's;
//   - a key the platform makes for itself (the command line, the seed, a start script) belongs to a
//     platform service account named after what made it, which admins see like any other.

export interface KeyOwner {
  ownerUserId: string | null;
  serviceAccountId: string | null;
  role: "operator" | "tenant_admin" | "tenant_member";
  /** the owner's tenant (null: operators and platform accounts) */
  tenantId: string | null;
}

export async function resolveKeyOwner(
  tx: Tx,
  p: OperatorPrincipal | TenantPrincipal,
  opts: { serviceAccountId?: string; keyTenantId: string | null },
): Promise<KeyOwner> {
  if (opts.serviceAccountId) {
    const sa = await getServiceAccountOrThrow(p, opts.serviceAccountId, tx).catch(() => {
      throw validationFailed([{ path: "service_account_id", message: "No such service account" }]);
    });
    if (sa.disabledAt) throw validationFailed([{ path: "service_account_id", message: "That service account is disabled" }]);
    if (sa.tenantId !== null && sa.tenantId !== opts.keyTenantId)
      throw validationFailed([{ path: "service_account_id", message: "A tenant's service account owns keys of its own tenant only" }]);
    return { ownerUserId: null, serviceAccountId: sa.id, role: sa.role as KeyOwner["role"], tenantId: sa.tenantId };
  }
  if (p.userId) return ownerOfUser(tx, p.userId);
  if (p.keyId) {
    const maker = await tx.apiKey.findUnique({ where: { id: p.keyId }, select: { ownerUserId: true, serviceAccountId: true } });
    if (maker?.ownerUserId) return ownerOfUser(tx, maker.ownerUserId);
    if (maker?.serviceAccountId) {
      const sa = await tx.serviceAccount.findUniqueOrThrow({
        where: { id: maker.serviceAccountId },
        select: { id: true, role: true, tenantId: true },
      });
      return { ownerUserId: null, serviceAccountId: sa.id, role: sa.role as KeyOwner["role"], tenantId: sa.tenantId };
    }
  }
  // the platform acting for itself
  const id = await platformServiceAccount(tx, p.label, opts.keyTenantId);
  return { ownerUserId: null, serviceAccountId: id, role: opts.keyTenantId ? "tenant_admin" : "operator", tenantId: opts.keyTenantId };
}

async function ownerOfUser(tx: Tx, userId: string): Promise<KeyOwner> {
  const u = await tx.user.findUniqueOrThrow({ where: { id: userId }, select: { role: true, tenantId: true } });
  return { ownerUserId: userId, serviceAccountId: null, role: u.role as KeyOwner["role"], tenantId: u.tenantId };
}
