import "server-only";
import { pool } from "@/lib/db/client";
import { SCHEDULER_LOCK } from "@/lib/scheduler/run-cycle";
import { stopTenantWork } from "./tenant-work";

/**
 * The sweep behind suspension: whatever work a suspended tenant still has (a tenant suspended by
 * hand in the database, a replica that slipped in), stopped the same way. Cheap when there is none.
 */
export async function enforceSuspensions() {
  const c = await pool().connect();
  try {
    await c.query("BEGIN");
    const { rows } = await c.query<{ id: string }>(
      `SELECT t.id::text FROM tenants t WHERE t.status = 'suspended' AND (
         EXISTS (SELECT 1 FROM jobs j WHERE j.tenant_id = t.id AND (j.status IN ('running', 'queued') OR (j.status = 'blocked' AND j.block_reason <> 'suspended')))
         OR EXISTS (SELECT 1 FROM endpoint_replicas r WHERE r.tenant_id = t.id AND r.status <> 'stopped'))`,
    );
    if (rows.length === 0) {
      await c.query("COMMIT");
      return { tenants: 0, jobs_cancelled: 0, jobs_blocked: 0, replicas_stopped: 0 };
    }
    await c.query("SELECT pg_advisory_xact_lock($1)", [SCHEDULER_LOCK]);
    const out = await stopTenantWork(c, rows.map((r) => r.id), "suspension sweep");
    await c.query("COMMIT");
    return { tenants: rows.length, ...out };
  } catch (e) {
    await c.query("ROLLBACK").catch(() => {});
    throw e;
  } finally {
    c.release();
  }
}
