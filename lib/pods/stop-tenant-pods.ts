import "server-only";
import type { SqlClient } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { movePods } from "./move-pods";
import { podStatusOf } from "./pod-lifecycle";
import { LOCK_TENANTS_RUNNING_PODS } from "./statements";

/**
 * Stops every starting or running pod of the given tenants, in the caller's transaction (a
 * prepaid balance at zero past its grace, a suspension): their GPUs are released and their
 * billing ends now; their nodes stop the containers on the next heartbeat. Waiting pods stay
 * pending: the scheduler places none for such tenants. The tenant starts them again itself.
 */
export async function stopTenantPods(c: SqlClient, tenantIds: string[], why: { reason: string; actor: string }): Promise<string[]> {
  if (tenantIds.length === 0) return [];
  const rows = await run(c, LOCK_TENANTS_RUNNING_PODS, [tenantIds]);
  await movePods(
    c,
    rows.map((r) => ({ id: r.id, from: podStatusOf(r.status), to: "stopping", reason: why.reason })),
    why.actor,
  );
  return rows.map((r) => r.id);
}
