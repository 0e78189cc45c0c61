import "server-only";
import type { SqlClient } from "@/lib/db/client";

/**
 * The set-based cancel: running jobs of the given tenants end as cancelled with `error`, their
 * GPUs are freed (the job's new state first, so the allocation checks see a consistent pair) and
 * each transition is recorded. The jobs trigger bills each run's final segment in the same
 * transaction, exactly once (a unique index per run), as for any other cancel.
 */
export async function stopRunningJobs(
  c: SqlClient,
  tenantIds: string[],
  why: { error: string; reason: string; actor: string },
): Promise<string[]> {
  if (tenantIds.length === 0) return [];
  const { rows } = await c.query<{ id: string }>(
    `UPDATE jobs SET status = 'cancelled', finished_at = now(), updated_at = now(), error = $2
      WHERE tenant_id = ANY($1::uuid[]) AND status = 'running' RETURNING id::text`,
    [tenantIds, why.error],
  );
  const ids = rows.map((r) => r.id);
  if (ids.length === 0) return [];
  await c.query(`UPDATE gpus SET allocated_job_id = NULL, updated_at = now() WHERE allocated_job_id = ANY($1::uuid[])`, [ids]);
  await c.query(
    `INSERT INTO job_events (job_id, from_status, to_status, reason, actor) SELECT id, 'running', 'cancelled', $2, $3 FROM unnest($1::uuid[]) id`,
    [ids, why.reason, why.actor],
  );
  return ids;
}
