import "server-only";
import type { TenantPrincipal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";

/** The names of a tenant's live endpoints (what pipelines' inference steps name). */
export async function tenantEndpointNames(p: TenantPrincipal): Promise<string[]> {
  const rows = await db().endpoint.findMany({
    where: { tenantId: p.tenantId, deletedAt: null },
    select: { name: true },
    orderBy: { name: "asc" },
  });
  return rows.map((r) => r.name);
}
