import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { db } from "@/lib/db/client";

import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { userSelect } from "./schemas";

export async function listUsers(principal: Principal, opts: { limit: number; cursor?: string; tenant_id?: string }) {
  const scope = tenantScope(principal);
  const tenantId = scope.tenantId ?? opts.tenant_id;
  const rows = await db().user.findMany({
    where: { ...(tenantId ? { tenantId } : {}), ...afterCursor(decodeCursor(opts.cursor)) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
    select: userSelect,
  });
  return page(rows, opts.limit);
}

/** The admins of a tenant, for "ask an admin" (names and emails, active ones only). */
export async function tenantAdmins(tenantId: string) {
  return db().user.findMany({
    where: { tenantId, role: "tenant_admin", disabledAt: null },
    orderBy: { name: "asc" },
    take: 10,
    select: { name: true, email: true },
  });
}
