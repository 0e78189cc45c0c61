import "server-only";
import type { Principal, TenantRole } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { isUuid } from "@/lib/ids";
import { effectiveSettings } from "@/lib/settings/settings";

/**
 * The principal a signed-in user acts as, or null when the user or its tenant may not sign in, or
 * when the session's version is not the user's current one (a password change, a sign-out, being
 * disabled or demoted ended every earlier session).
 */
export async function principalForUserId(userId: string, sessionVersion: number): Promise<Principal | null> {
  if (!isUuid(userId)) return null;
  const user = await db().user.findUnique({
    where: { id: userId },
    select: {
      id: true,
      email: true,
      role: true,
      tenantId: true,
      disabledAt: true,
      sessionVersion: true,
      emailVerifiedAt: true,
      totpEnabledAt: true,
      tenant: { select: { status: true } },
    },
  });
  if (!user || user.disabledAt || !user.emailVerifiedAt || user.sessionVersion !== sessionVersion) return null;
  const enrol = !user.totpEnabledAt && (await twoFactorRequired(user.role)) ? { mustEnrolTwoFactor: true } : {};
  if (user.role === "operator") return { kind: "operator", userId: user.id, label: user.email, ...enrol };
  if (!user.tenantId || user.tenant?.status !== "active") return null;
  return { kind: "tenant", tenantId: user.tenantId, role: user.role as TenantRole, userId: user.id, label: user.email, ...enrol };
}

// The operators' two-factor policy, read at most every few seconds per process (every request of a
// session asks): a change applies within that.
const POLICY_TTL_MS = 5_000;
let policy: { at: number; value: Promise<{ operators: boolean; tenant_admins: boolean }> } | undefined;

async function twoFactorRequired(role: string): Promise<boolean> {
  if (!policy || Date.now() - policy.at > POLICY_TTL_MS) policy = { at: Date.now(), value: effectiveSettings().then((s) => s.twoFactor) };
  const p = await policy.value.catch(() => ({ operators: false, tenant_admins: false }));
  return (role === "operator" && p.operators) || (role === "tenant_admin" && p.tenant_admins);
}

/** Forgets the cached two-factor policy (after an operator changed it, in this process). */
export function forgetTwoFactorPolicy(): void {
  policy = undefined;
}
