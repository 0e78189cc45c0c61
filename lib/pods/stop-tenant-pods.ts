import "server-only";
import type { SqlClient } from "@/lib/db/client";
import { movePods } from "./move-pods";
import type { PodStatus } from "./pod-lifecycle";

/**
 * Stops every starting or running pod of the given tenants, in the caller's transaction (a
 * prepaid balance at zero past its grace, a suspension): their GPUs are released and their
 * billing ends now; their nodes stop the containers on the next heartbeat. Waiting pods stay
 * pending: the scheduler places none for such tenants. The tenant starts them again itself.
 */
export async function stopTenantPods(c: SqlClient, tenantIds: string[], why: { reason: string; actor: string }): Promise<string[]> {
  if (tenantIds.length === 0) return [];
  const { rows } = await c.query<{ id: string; status: PodStatus }>(
    `SELECT id::text, status FROM pods WHERE tenant_id = ANY($1::uuid[]) AND status IN ('starting', 'running') ORDER BY id FOR UPDATE`,
    [tenantIds],
  );
  await movePods(c, rows.map((r) => ({ id: r.id, from: r.status, to: "stopping", reason: why.reason })), why.actor);
  return rows.map((r) => r.id);
}
