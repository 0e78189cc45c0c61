import { statement } from "@/lib/db/statement";

// The burst policy's statements, declared (lib/db/statement.ts).

/**
 * Jobs that may burst now: queued (not blocked) for longer than $1 seconds since they last began
 * waiting (at once after their instance failed under them), of an active tenant that allows burst, not tied to a cluster or a reservation, without
 * a live instance rented for them; best priority first.
 */
export const JOBS_WAITING_TO_BURST = statement("burst.jobs-waiting", {
  params: ["int4", "int4"],
  columns: {
    id: "text",
    tenant_id: "text",
    gpu_type: "text",
    gpu_count: "int4",
    max_retries: "int4",
    needs_containers: "bool",
    max_price: "int4?",
    waiting_since: "timestamptz",
  },
  text: `SELECT j.id::text, j.tenant_id::text, j.gpu_type, j.gpu_count, j.max_retries, (j.image IS NOT NULL OR j.command IS NOT NULL) AS needs_containers,
                t.burst_max_price_cents_per_gpu_hour AS max_price, w.since AS waiting_since
           FROM jobs j JOIN tenants t ON t.id = j.tenant_id
           CROSS JOIN LATERAL (
             SELECT GREATEST(j.submitted_at, COALESCE(max(e.created_at), j.submitted_at)) AS since FROM job_events e
              WHERE e.job_id = j.id AND e.to_status = 'queued' AND e.from_status IS DISTINCT FROM 'queued') w
          WHERE j.status = 'queued' AND t.status = 'active' AND t.burst_enabled AND t.burst_max_price_cents_per_gpu_hour IS NOT NULL
            AND j.cluster_id IS NULL AND j.reservation_id IS NULL AND (j.not_before IS NULL OR j.not_before <= now())
            -- a job whose instance failed under it (interrupted, never joined) tries the next offer at once
            AND (w.since <= now() - make_interval(secs => $1::int)
                 OR EXISTS (SELECT 1 FROM burst_attempts ba WHERE ba.job_id = j.id AND ba.outcome IN ('interrupted', 'never_registered') AND ba.created_at > now() - interval '1 hour'))
            AND NOT EXISTS (SELECT 1 FROM provider_instances pi WHERE pi.job_id = j.id AND pi.status IN ('launching', 'booting', 'running', 'terminating'))
          ORDER BY j.priority, j.submitted_at LIMIT $2::int`,
});

/** The offers this job failed on in the last hour (capacity, never registered, interrupted): not tried again soon. */
export const FAILED_OFFERS_OF_JOB = statement("burst.failed-offers", {
  params: ["uuid"],
  columns: { provider: "text", offer_id: "text" },
  text: `SELECT DISTINCT provider, offer_id FROM burst_attempts
          WHERE job_id = $1 AND provider IS NOT NULL AND offer_id IS NOT NULL
            AND outcome IN ('capacity', 'never_registered', 'interrupted', 'provider_error') AND created_at > now() - interval '1 hour'`,
});

/**
 * An idle running instance of the same tenant that can take the job now ($1 gpu type, $2 GPUs, $3
 * price cap, $4 containers needed, $5 tenant). Never another tenant's: its work ran on that machine.
 */
export const IDLE_INSTANCE_FOR = statement("burst.idle-instance-for", {
  params: ["text", "int4", "int4", "bool", "uuid"],
  columns: { id: "text", node_id: "text", provider: "text", region: "text", offer_id: "text", price_cents_per_gpu_hour: "int4" },
  text: `SELECT i.id::text, i.node_id::text, i.provider, i.region, i.offer_id, i.price_cents_per_gpu_hour
           FROM provider_instances i JOIN nodes n ON n.id = i.node_id
          WHERE i.status = 'running' AND i.job_id IS NULL AND i.tenant_id = $5 AND i.gpu_type = $1 AND i.gpu_count >= $2 AND i.price_cents_per_gpu_hour * i.gpu_count <= $3 * $2
            AND n.status = 'available' AND (NOT $4 OR n.containers)
          ORDER BY i.price_cents_per_gpu_hour * i.gpu_count, i.idle_since LIMIT 1 FOR UPDATE OF i SKIP LOCKED`,
});

/** Booting instances whose node has joined: available, with its GPUs of the instance's type registered. */
export const JOINED_INSTANCES = statement("burst.joined", {
  params: [],
  columns: { id: "text", job_id: "text?", node_id: "text", hostname: "text" },
  text: `SELECT i.id::text, i.job_id::text, i.node_id::text, n.hostname FROM provider_instances i JOIN nodes n ON n.id = i.node_id
          WHERE i.status = 'booting' AND n.status = 'available'
            AND (SELECT count(*) FROM gpus g WHERE g.node_id = n.id AND g.gpu_type = i.gpu_type AND g.status = 'available') >= 1`,
});

/**
 * Instances (booting or running) whose job no longer needs them: it is not waiting in the queue and
 * not running on them — it ended, runs somewhere else (local capacity freed first), or is blocked
 * (over quota, out of prepaid funds, its tenant suspended). Nothing is placed on a node dedicated to
 * a blocked job, so keeping it would leave a rented machine up, unbilled; released, the idle limit
 * ends it unless a job of its tenant takes it first. A job back in the queue (failed with retries
 * left, requeued, unblocked) keeps its instance.
 */
export const RELEASE_UNNEEDED = statement("burst.release-unneeded", {
  params: [],
  columns: { id: "text", job_id: "text", tenant_id: "text", job_status: "text", block_reason: "text?" },
  text: `UPDATE provider_instances i SET job_id = NULL, idle_since = now()
           FROM jobs j
          WHERE i.job_id = j.id AND i.status IN ('booting', 'running')
            AND j.status <> 'queued'
            AND NOT (j.status = 'running' AND EXISTS (SELECT 1 FROM gpus g WHERE g.allocated_job_id = j.id AND g.node_id = i.node_id))
      RETURNING i.id::text, j.id::text AS job_id, j.tenant_id::text, j.status AS job_status, j.block_reason`,
});

/**
 * What a launch would commit the tenant and the provider to, read under their burst locks ($1
 * tenant, $2 provider, $3 the hour's start, $4 the day's start, $5 the job): spend so far in the
 * window (price × GPUs × the time each instance ran in it) plus one more hour of every live
 * instance (launching, booting, running) — an instance launched now costs its first hour whatever
 * the clock says; the GPUs rented for the tenant's other waiting jobs (they count against its quota
 * once they run); its quota and GPUs in use; and, for a prepaid tenant, its balance.
 */
export const LAUNCH_COMMITMENTS = statement("burst.launch-commitments", {
  params: ["uuid", "text", "timestamptz", "timestamptz", "uuid"],
  columns: {
    tenant_hour_cents: "int8",
    tenant_day_cents: "int8",
    provider_day_cost_cents: "int8",
    tenant_live_hourly_cents: "int8",
    rented_waiting_gpus: "int4",
    gpu_quota: "int4",
    in_use: "int4",
    billing_mode: "text",
    balance_cents: "int8",
    status: "text",
    burst_enabled: "bool",
    job_status: "text?",
  },
  text: `SELECT ${committed("i.price_cents_per_gpu_hour", "i.tenant_id = t.id", "$3", true)} AS tenant_hour_cents,
                ${committed("i.price_cents_per_gpu_hour", "i.tenant_id = t.id", "$4")} AS tenant_day_cents,
                ${committed("i.cost_cents_per_gpu_hour", "i.provider = $2", "$4")} AS provider_day_cost_cents,
                (SELECT COALESCE(sum(i.price_cents_per_gpu_hour * i.gpu_count), 0) FROM provider_instances i
                  WHERE i.tenant_id = t.id AND i.status IN ('launching', 'booting', 'running'))::bigint AS tenant_live_hourly_cents,
                (SELECT COALESCE(sum(j.gpu_count), 0) FROM provider_instances i JOIN jobs j ON j.id = i.job_id
                  WHERE i.tenant_id = t.id AND i.status IN ('launching', 'booting', 'running') AND j.status IN ('queued', 'blocked') AND j.id <> $5)::int AS rented_waiting_gpus,
                t.gpu_quota, COALESCE((SELECT u.in_use FROM tenant_gpus_in_use(ARRAY[t.id]) u), 0)::int AS in_use,
                t.billing_mode, (SELECT COALESCE(sum(l.amount_cents), 0) FROM ledger_entries l WHERE l.tenant_id = t.id)::bigint AS balance_cents,
                t.status, t.burst_enabled, (SELECT j.status FROM jobs j WHERE j.id = $5) AS job_status
           FROM tenants t WHERE t.id = $1`,
});

/** The launching row of a claimed launch: the job's one live instance (a cycle that got there first wins; nothing is returned then). */
export const INSERT_LAUNCHING_INSTANCE = statement("burst.insert-launching", {
  params: ["text", "text", "text", "text", "text", "int4", "bool", "int4", "int4", "uuid", "uuid", "uuid"],
  columns: { id: "text" },
  text: `INSERT INTO provider_instances (provider, region, offer_id, provider_gpu_type, gpu_type, gpu_count, interruptible,
                                    cost_cents_per_gpu_hour, price_cents_per_gpu_hour, cluster_id, tenant_id, job_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (job_id) WHERE status IN ('launching', 'booting', 'running', 'terminating') DO NOTHING
         RETURNING id::text`,
});

/**
 * What is committed in a window from `since`, at `rate` per GPU-hour, over the instances `where`
 * names: what each instance cost in the window so far plus, for each live one, one more hour. With
 * `liveAhead` (the rolling hour) a live instance counts its next hour only — what it ran in the last
 * hour is the same rate, counting both would count it twice.
 */
function committed(rate: string, where: string, since: string, liveAhead = false): string {
  const elapsed = `CASE WHEN i.launched_at IS NULL THEN 0
                   ELSE GREATEST(0, extract(epoch FROM LEAST(COALESCE(i.terminated_at, now()), now()) - GREATEST(i.launched_at, ${since}))) / 3600 END`;
  const live = `i.status IN ('launching', 'booting', 'running')`;
  const hours = liveAhead ? `CASE WHEN ${live} THEN 1 ELSE ${elapsed} END` : `${elapsed} + CASE WHEN ${live} THEN 1 ELSE 0 END`;
  return `(SELECT COALESCE(round(sum(${rate} * i.gpu_count * (${hours}))), 0)
           FROM provider_instances i
          WHERE ${where} AND (i.status IN ('launching', 'booting', 'running', 'terminating') OR i.terminated_at > ${since}))::bigint`;
}

/** An open alert about burst is raised once (and its facts kept current while it fires); answers whether it is new. */
export const RAISE_BURST_ALERT = statement("burst.raise-alert", {
  params: ["text", "text", "text", "text", "text", "uuid?", "uuid?", "uuid?", "text", "text", "jsonb"],
  columns: { id: "text", inserted: "bool" },
  text: `INSERT INTO alert_events (rule_type, dedupe_key, subject_type, subject_id, subject_label, tenant_id, cluster_id, node_id, severity, message, details)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (dedupe_key) WHERE status = 'firing' DO UPDATE SET last_seen_at = now(), message = EXCLUDED.message, details = EXCLUDED.details
         RETURNING id::text, (xmax = 0) AS inserted`,
});

export const RESOLVE_BURST_ALERT = statement("burst.resolve-alert", {
  params: ["text"],
  columns: { id: "text" },
  text: `UPDATE alert_events SET status = 'resolved', resolved_at = now() WHERE dedupe_key = $1 AND status = 'firing' RETURNING id::text`,
});
