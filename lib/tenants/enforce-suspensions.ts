import "server-only";
import { lockForTransaction } from "@/lib/db/locks";
import { inTransaction } from "@/lib/db/transaction";
import { stopTenantWork } from "./tenant-work";

/**
 * The sweep behind suspension: whatever work a suspended tenant still has (a tenant suspended by
 * hand in the database, a replica that slipped in), stopped the same way. Cheap when there is none.
 */
export async function enforceSuspensions() {
  return inTransaction(async (c) => {
    const { rows } = await c.query<{ id: string }>(
      `SELECT t.id::text FROM tenants t WHERE t.status = 'suspended' AND (
         EXISTS (SELECT 1 FROM jobs j WHERE j.tenant_id = t.id AND (j.status IN ('running', 'queued') OR (j.status = 'blocked' AND j.block_reason <> 'suspended')))
         OR EXISTS (SELECT 1 FROM endpoint_replicas r WHERE r.tenant_id = t.id AND r.status <> 'stopped'))`,
    );
    if (rows.length === 0) return { tenants: 0, jobs_cancelled: 0, jobs_blocked: 0, replicas_stopped: 0 };
    await lockForTransaction(c, "scheduler");
    const out = await stopTenantWork(c, rows.map((r) => r.id), "suspension sweep");
    return { tenants: rows.length, ...out };
  });
}
