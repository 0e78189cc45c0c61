import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { db } from "@/lib/db/client";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { apiKeySelect, type KeyScope } from "./schemas";

export async function listApiKeys(
  principal: Principal,
  opts: {
    limit: number;
    cursor?: string;
    scope?: KeyScope;
    tenant_id?: string;
    include_revoked?: "true" | "false";
    created_by_user_id?: string;
  },
) {
  const scope = tenantScope(principal);
  const tenantId = scope.tenantId ?? opts.tenant_id;
  const rows = await db().apiKey.findMany({
    where: {
      ...(tenantId ? { tenantId } : {}),
      ...(opts.scope ? { scope: opts.scope } : {}),
      ...(opts.created_by_user_id ? { createdByUserId: opts.created_by_user_id } : {}),
      ...(opts.include_revoked === "true" ? {} : { revokedAt: null }),
      ...afterCursor(decodeCursor(opts.cursor)),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
    select: { ...apiKeySelect, tenant: { select: { name: true } }, cluster: { select: { name: true } } },
  });
  return page(rows, opts.limit);
}
