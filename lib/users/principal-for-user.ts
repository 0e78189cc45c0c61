import "server-only";
import type { Principal, TenantRole } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { isUuid } from "@/lib/ids";

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
      tenant: { select: { status: true } },
    },
  });
  if (!user || user.disabledAt || user.sessionVersion !== sessionVersion) return null;
  if (user.role === "operator") return { kind: "operator", userId: user.id, label: user.email };
  if (!user.tenantId || user.tenant?.status !== "active") return null;
  return { kind: "tenant", tenantId: user.tenantId, role: user.role as TenantRole, userId: user.id, label: user.email };
}
