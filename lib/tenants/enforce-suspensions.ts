import "server-only";
import { lockForTransaction } from "@/lib/db/locks";
import { run } from "@/lib/db/statement";
import { inTransaction } from "@/lib/db/transaction";
import { SUSPENDED_TENANTS_WITH_WORK } from "./statements";
import { stopTenantWork } from "./tenant-work";

/**
 * The sweep behind suspension: whatever work a suspended tenant still has (a tenant suspended by
 * hand in the database, a replica that slipped in), stopped the same way. Cheap when there is none.
 */
export async function enforceSuspensions() {
  return inTransaction(async (c) => {
    const rows = await run(c, SUSPENDED_TENANTS_WITH_WORK);
    if (rows.length === 0) return { tenants: 0, jobs_cancelled: 0, jobs_blocked: 0, replicas_stopped: 0 };
    await lockForTransaction(c, "scheduler");
    const out = await stopTenantWork(
      c,
      rows.map((r) => r.id),
      "suspension sweep",
    );
    return { tenants: rows.length, ...out };
  });
}
