import "server-only";
import type { Tx } from "@/lib/db/client";
import { forbidden, validationFailed } from "@/lib/errors";

/** Locks a tenant's row (quota and status) for work being created for it; a suspended tenant gets 403. */
export async function lockTenant(tx: Tx, tenantId: string) {
  const rows = await tx.$queryRaw<
    Array<{ gpu_quota: number; status: string }>
  >`SELECT gpu_quota, status FROM tenants WHERE id = ${tenantId}::uuid FOR UPDATE`;
  if (!rows[0]) throw validationFailed([{ path: "tenant_id", message: "No such tenant" }]);
  if (rows[0].status !== "active") throw forbidden("Tenant is suspended");
  return rows[0];
}
