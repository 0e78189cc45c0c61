import { statement } from "@/lib/db/statement";

// The tenants' raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts.

/**
 * GPUs the tenant $1 holds now, as its quota counts them (tenant_gpus_in_use, the database's one
 * definition: everything that holds a GPU), with the split by holder, each clause written as the
 * function writes it: jobs and endpoint replicas outside the tenant's own active reservations,
 * pods, and the GPUs of the nodes its active reservations hold (the work inside them included).
 * tests/integration/gpus-in-use.test.ts holds the parts to the total. Also the prepaid balance.
 */
export const TENANT_FIGURES = statement("tenants.figures", {
  params: ["uuid", "uuid"],
  columns: { in_use: "int4", jobs: "int4", replicas: "int4", pods: "int4", reserved: "int4", balance: "int8" },
  text: `
    WITH own_reserved AS (
      SELECT rn.node_id FROM reservation_nodes rn WHERE rn.tenant_id = $1::uuid AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now()
    )
    SELECT COALESCE((SELECT in_use FROM tenant_gpus_in_use(ARRAY[$1::uuid])), 0) AS in_use,
           (SELECT count(*) FROM gpus g JOIN jobs j ON j.id = g.allocated_job_id
             WHERE j.tenant_id = $1::uuid AND g.node_id NOT IN (SELECT node_id FROM own_reserved))::int AS jobs,
           (SELECT count(*) FROM gpus g JOIN endpoint_replicas r ON r.id = g.allocated_replica_id
             WHERE r.tenant_id = $1::uuid AND g.node_id NOT IN (SELECT node_id FROM own_reserved))::int AS replicas,
           (SELECT count(*) FROM gpus g JOIN pods p ON p.id = g.allocated_pod_id WHERE p.tenant_id = $1::uuid)::int AS pods,
           (SELECT COALESCE(sum(rn.gpu_count), 0) FROM reservation_nodes rn
             WHERE rn.tenant_id = $1::uuid AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now())::int AS reserved,
           (SELECT COALESCE(sum(amount_cents), 0)::bigint FROM ledger_entries WHERE tenant_id = $2::uuid) AS balance`,
});

/** Suspended tenants that still have work. */
export const SUSPENDED_TENANTS_WITH_WORK = statement("tenants.suspended-with-work", {
  params: [],
  columns: { id: "text" },
  text: `SELECT t.id::text FROM tenants t WHERE t.status = 'suspended' AND (
         EXISTS (SELECT 1 FROM jobs j WHERE j.tenant_id = t.id AND (j.status IN ('running', 'queued') OR (j.status = 'blocked' AND j.block_reason <> 'suspended')))
         OR EXISTS (SELECT 1 FROM endpoint_replicas r WHERE r.tenant_id = t.id AND r.status <> 'stopped')
         OR EXISTS (SELECT 1 FROM reservations v WHERE v.tenant_id = t.id AND v.status IN ('confirmed', 'active'))
         OR EXISTS (SELECT 1 FROM pipeline_steps s JOIN pipelines p ON p.id = s.pipeline_id
                     WHERE p.tenant_id = t.id AND s.status = 'running' AND s.kind <> 'job' AND s.call_lease_until IS NOT NULL))`,
});

/** The waiting jobs of the tenants $1 blocked as suspended ($2: what the tenant reads; $3: the actor), with their events. */
export const BLOCK_SUSPENDED_JOBS = statement("tenants.block-suspended-jobs", {
  params: ["uuid[]", "text", "text"],
  columns: { id: "text", from_status: "text" },
  text: `WITH old AS (
       SELECT id, status FROM jobs WHERE tenant_id = ANY($1::uuid[]) AND status IN ('queued', 'blocked') AND block_reason IS DISTINCT FROM 'suspended' FOR UPDATE
     ), b AS (
       UPDATE jobs j SET status = 'blocked', block_reason = 'suspended', pending_reason = $2, updated_at = now() FROM old WHERE j.id = old.id
       RETURNING j.id, old.status AS from_status
     ), e AS (
       INSERT INTO job_events (job_id, from_status, to_status, reason, actor) SELECT id, from_status, 'blocked', 'tenant suspended', $3 FROM b
     ) SELECT id::text, from_status FROM b`,
});

/** The live endpoint replicas of the tenants $1, locked. */
export const LOCK_LIVE_REPLICAS = statement("tenants.lock-live-replicas", {
  params: ["uuid[]"],
  columns: { id: "text" },
  text: `SELECT id::text FROM endpoint_replicas WHERE tenant_id = ANY($1::uuid[]) AND status <> 'stopped' FOR UPDATE`,
});

/** Reactivation: the jobs suspension blocked ($1's) go back to the queue, with their events ($2: the actor). */
export const REQUEUE_SUSPENDED_JOBS = statement("tenants.requeue-suspended-jobs", {
  params: ["uuid", "text"],
  columns: { id: "text" },
  text: `WITH u AS (
       UPDATE jobs SET status = 'queued', block_reason = NULL, pending_reason = 'Reactivated; waiting for the next scheduling cycle', updated_at = now()
        WHERE tenant_id = $1::uuid AND status = 'blocked' AND block_reason = 'suspended' RETURNING id
     ), e AS (
       INSERT INTO job_events (job_id, from_status, to_status, reason, actor) SELECT id, 'blocked', 'queued', 'tenant reactivated', $2 FROM u
     ) SELECT id::text FROM u`,
});

/** Locks the tenant's row. */
export const LOCK_TENANT = statement("tenants.lock", {
  params: ["uuid"],
  columns: { status: "text" },
  text: `SELECT status FROM tenants WHERE id = $1::uuid FOR UPDATE`,
});
