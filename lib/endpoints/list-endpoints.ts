import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { endpointInclude } from "./endpoint-json";
import { endpointScope } from "./get-endpoint";

export async function listEndpoints(p: Principal, opts: { limit: number; cursor?: string; status?: string; tenant_id?: string }) {
  const tenantId = p.kind === "tenant" ? p.tenantId : opts.tenant_id;
  const rows = await db().endpoint.findMany({
    where: {
      deletedAt: null,
      ...endpointScope(p),
      ...(tenantId ? { tenantId } : {}),
      ...(opts.status ? { status: opts.status } : {}),
      ...afterCursor(decodeCursor(opts.cursor)),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
    include: endpointInclude,
  });
  return page(rows, opts.limit);
}
