import { statement } from "@/lib/db/statement";

// Pods' raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts.

/**
 * Where each pod ($1) runs now and what it has cost: its open placement (node, GPUs, published
 * ports, since when its container runs) and every billed segment plus the running one not billed yet.
 */
export const POD_LIVE_FACTS = statement("pods.live-facts", {
  params: ["uuid[]"],
  columns: { id: "text", host: "text?", hostname: "text?", gpu_ids: "text[]?", ports: "jsonb?", running_at: "timestamptz?", cost: "text" },
  text: `SELECT p.id::text, n.address AS host, n.hostname, pl.gpu_ids::text[] AS gpu_ids, pl.ports, pl.running_at,
            (COALESCE((SELECT sum(u.amount_cents) FROM usage_events u WHERE u.pod_id = p.id), 0) + COALESCE(un.cents, 0))::text AS cost
       FROM unnest($1::uuid[]) AS x(id) JOIN pods p ON p.id = x.id
       LEFT JOIN pod_placements pl ON pl.pod_id = p.id AND pl.attempt = p.attempts AND pl.ended_at IS NULL
       LEFT JOIN nodes n ON n.id = pl.node_id
       LEFT JOIN LATERAL (
         SELECT round(extract(epoch FROM now() - GREATEST(pl.running_at, COALESCE(max(u.ended_at), pl.running_at))) * cardinality(pl.gpu_ids)
                      * COALESCE((SELECT r.cents_per_hour FROM gpu_rates r WHERE r.gpu_type IN (pl.gpu_type, '*') AND r.effective_from <= now()
                                   ORDER BY (r.gpu_type = '*'), r.effective_from DESC LIMIT 1), 0) / 3600.0) AS cents
           FROM usage_events u WHERE pl.running_at IS NOT NULL AND u.pod_id = pl.pod_id AND u.attempt = pl.attempt
       ) un ON true`,
});

/** Where each placement of the pod $1 ran and when, newest first. */
export const POD_PLACEMENTS = statement("pods.placements", {
  params: ["uuid"],
  columns: {
    attempt: "int4",
    hostname: "text?",
    gpu_ids: "text[]",
    started_at: "timestamptz",
    running_at: "timestamptz?",
    ended_at: "timestamptz?",
    end_status: "text?",
  },
  text: `SELECT pl.attempt, n.hostname, pl.gpu_ids::text[] AS gpu_ids, pl.started_at, pl.running_at, pl.ended_at, pl.end_status
       FROM pod_placements pl LEFT JOIN nodes n ON n.id = pl.node_id WHERE pl.pod_id = $1 ORDER BY pl.attempt DESC LIMIT 200`,
});

/** Pods ($1) move from the state $2 to $3 ($4: why), by position; one that left a placed state ($5) forgets its fence and node. Answers the pods that moved. */
export const MOVE_PODS = statement("pods.move", {
  params: ["uuid[]", "text[]", "text[]", "text[]", "text[]"],
  columns: { id: "text" },
  text: `UPDATE pods p SET status = x.to_status, status_reason = x.reason, updated_at = now(),
            fence = CASE WHEN x.to_status = ANY($5::text[]) THEN p.fence END,
            node_id = CASE WHEN x.to_status = ANY($5::text[]) THEN p.node_id END,
            pending_reason = CASE WHEN x.to_status = 'pending' THEN 'Waiting for the next scheduling cycle' END,
            terminated_at = CASE WHEN x.to_status = 'terminated' THEN now() END
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS x(id, from_status, to_status, reason)
      WHERE p.id = x.id AND p.status = x.from_status
      RETURNING p.id::text`,
});

/** The GPUs the pods $1 held are free. */
export const FREE_POD_GPUS = statement("pods.free-gpus", {
  params: ["uuid[]"],
  columns: {},
  text: `UPDATE gpus SET allocated_pod_id = NULL, updated_at = now() WHERE allocated_pod_id = ANY($1::uuid[])`,
});

/** The open placements of the pods $1 end, in the state $2 with the exit code $3 (by position). */
export const END_POD_PLACEMENTS = statement("pods.end-placements", {
  params: ["uuid[]", "text[]", "int4[]"],
  columns: {},
  text: `UPDATE pod_placements pl SET ended_at = GREATEST(now(), COALESCE(pl.running_at, pl.started_at)), end_status = x.to_status, exit_code = x.exit_code
         FROM unnest($1::uuid[], $2::text[], $3::int[]) AS x(id, to_status, exit_code)
        WHERE pl.pod_id = x.id AND pl.ended_at IS NULL`,
});

/** One pod event per move that changed a state ($1–$4 as MOVE_PODS; $5 the actor). */
export const RECORD_POD_EVENTS = statement("pods.record-events", {
  params: ["uuid[]", "text[]", "text[]", "text[]", "text"],
  columns: {},
  text: `INSERT INTO pod_events (pod_id, from_status, to_status, reason, actor)
     SELECT x.id, x.from_status, x.to_status, x.reason, $5 FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS x(id, from_status, to_status, reason)
      WHERE x.from_status IS DISTINCT FROM x.to_status`,
});

/** The placed pods on the nodes $1, locked in id order. */
export const LOCK_PODS_ON_NODES = statement("pods.lock-on-nodes", {
  params: ["uuid[]"],
  columns: { id: "text", status: "text", restart_on_failure: "bool" },
  text: `SELECT id::text, status, restart_on_failure FROM pods WHERE node_id = ANY($1::uuid[]) AND status IN ('starting', 'running', 'stopping') ORDER BY id FOR UPDATE`,
});

/** Each tenant hears that its pods ($1) stopped, and why ($2); it resolves once the pod runs again or the tenant acts. */
export const FIRE_PODS_INTERRUPTED = statement("pods.fire-interrupted", {
  params: ["uuid[]", "text"],
  columns: {},
  text: `INSERT INTO alert_events (rule_type, dedupe_key, subject_type, subject_id, subject_label, cluster_id, node_id, tenant_id, severity, message, details)
       SELECT 'pod_interrupted', 'pod_interrupted:' || p.id, 'pod', p.id::text, p.name, n.cluster_id, n.id, p.tenant_id, 'warning',
              'Pod ' || p.name || ' was interrupted: ' || $2 || CASE WHEN p.status = 'pending' THEN '. It is being placed again (restart on failure); its container starts fresh.' ELSE '. Start it again when you are ready.' END,
              jsonb_build_object('cause', $2::text, 'restarting', p.status = 'pending')
         FROM pods p JOIN pod_placements pl ON pl.pod_id = p.id AND pl.attempt = p.attempts JOIN nodes n ON n.id = pl.node_id
        WHERE p.id = ANY($1::uuid[])
       ON CONFLICT (dedupe_key) WHERE status = 'firing' DO UPDATE SET last_seen_at = now(), details = EXCLUDED.details, message = EXCLUDED.message`,
});

/** Nodes out of service that still have placed pods. */
export const NODES_LOSING_PODS = statement("pods.nodes-losing-pods", {
  params: [],
  columns: { node_id: "text", status: "text" },
  text: `SELECT DISTINCT n.id::text AS node_id, n.status FROM pods p JOIN nodes n ON n.id = p.node_id
        WHERE p.status IN ('starting', 'running', 'stopping') AND n.status NOT IN ('available', 'draining')`,
});

/** Pods whose start (more than $2 seconds before $1) or stop ($3 seconds) was never confirmed, locked unless another sweep holds them. */
export const LATE_PODS = statement("pods.late", {
  params: ["timestamptz", "int4", "int4"],
  columns: { id: "text", status: "text" },
  text: `SELECT p.id::text, p.status FROM pods p JOIN pod_placements pl ON pl.pod_id = p.id AND pl.attempt = p.attempts
        WHERE (p.status = 'starting' AND pl.started_at < $1::timestamptz - make_interval(secs => $2::int))
           OR (p.status = 'stopping' AND p.updated_at < $1::timestamptz - make_interval(secs => $3::int))
        ORDER BY p.id FOR UPDATE OF p SKIP LOCKED`,
});

/** What the node $1 should be running of pods: each starting or running one with its open placement. */
export const POD_ASSIGNMENTS = statement("pods.assignments", {
  params: ["uuid"],
  columns: {
    id: "text",
    name: "text",
    attempt: "int4",
    fence: "text",
    image: "text",
    ports: "int4[]",
    ssh_public_key: "text?",
    gpu_ids: "text[]",
  },
  text: `SELECT p.id::text, p.name, pl.attempt, pl.fence::text AS fence, p.image, p.ports, p.ssh_public_key, pl.gpu_ids::text[] AS gpu_ids
       FROM pods p JOIN pod_placements pl ON pl.pod_id = p.id AND pl.attempt = p.attempts AND pl.ended_at IS NULL
      WHERE p.node_id = $1 AND p.status IN ('starting', 'running') ORDER BY pl.started_at`,
});

/** Locks the pod $1. */
/** Locks the pod $1 if the caller may see it: $2 is the caller's tenant, null for operators (lib/auth/tenant-scope). */
export const LOCK_POD = statement("pods.lock", {
  params: ["uuid", "uuid?"],
  columns: { tenant_id: "uuid", status: "text", name: "text" },
  text: `
      SELECT tenant_id, status, name FROM pods WHERE id = $1::uuid AND ($2::uuid IS NULL OR tenant_id = $2::uuid) FOR UPDATE`,
});

/** The tenant acted on the interrupted pod $1: the alert about it has done its work. */
export const RESOLVE_POD_INTERRUPTED = statement("pods.resolve-interrupted", {
  params: ["text"],
  columns: {},
  text: `UPDATE alert_events SET status = 'resolved', resolved_at = now() WHERE rule_type = 'pod_interrupted' AND subject_id = $1 AND status = 'firing'`,
});

/** The pod $3 an agent of the cluster $1 (and node $2, NULL: any) reports on, locked: whether it runs there now, and whether it ever did. */
export const LOCK_REPORTED_POD = statement("pods.lock-reported", {
  params: ["uuid", "uuid?", "uuid"],
  columns: {
    status: "text",
    attempts: "int4",
    fence: "text?",
    restart_on_failure: "bool",
    ports: "int4[]",
    has_key: "bool",
    in_scope: "bool",
    ever_here: "bool",
  },
  text: `
      SELECT p.status, p.attempts, p.fence::text AS fence, p.restart_on_failure, p.ports, p.ssh_public_key IS NOT NULL AS has_key,
             EXISTS (SELECT 1 FROM nodes n WHERE n.id = p.node_id AND n.cluster_id = $1::uuid AND ($2::uuid IS NULL OR n.id = $2::uuid)) AS in_scope,
             EXISTS (SELECT 1 FROM pod_placements pl JOIN nodes n ON n.id = pl.node_id
                      WHERE pl.pod_id = p.id AND n.cluster_id = $1::uuid AND ($2::uuid IS NULL OR n.id = $2::uuid)) AS ever_here
        FROM pods p WHERE p.id = $3::uuid FOR UPDATE`,
});

/** The pod $1's container runs in its placement $2, with the host ports $3 (JSON). */
export const RECORD_POD_RUNNING = statement("pods.record-running", {
  params: ["uuid", "int4", "jsonb"],
  columns: {},
  text: `UPDATE pod_placements SET running_at = COALESCE(running_at, now()), ports = $3::jsonb WHERE pod_id = $1 AND attempt = $2 AND ended_at IS NULL`,
});

/** The running or starting pods of the tenants $1, locked in id order. */
export const LOCK_TENANTS_RUNNING_PODS = statement("pods.lock-tenants-running", {
  params: ["uuid[]"],
  columns: { id: "text", status: "text" },
  text: `SELECT id::text, status FROM pods WHERE tenant_id = ANY($1::uuid[]) AND status IN ('starting', 'running') ORDER BY id FOR UPDATE`,
});

// The scheduling cycle's pod statements (lib/pods/schedule-pods.ts), in the cycle's transaction.

/** Up to $1 pending pods of tenants that may run work, oldest first, at priority $2 or their tenant's cap. */
export const WAITING_PODS = statement("pods.waiting", {
  params: ["int8", "int4"],
  columns: {
    id: "uuid",
    tenant_id: "uuid",
    gpu_count: "int4",
    gpu_type: "text",
    cluster_id: "uuid?",
    priority: "int4",
    created_ms: "int8",
  },
  text: `SELECT p.id, p.tenant_id, p.gpu_count, p.gpu_type, p.cluster_id, GREATEST($2::int, t.max_priority) AS priority, (extract(epoch FROM p.created_at) * 1000)::bigint AS created_ms
       FROM pods p JOIN tenants t ON t.id = p.tenant_id
      WHERE p.status = 'pending' AND t.status = 'active' AND NOT (t.billing_mode = 'prepaid' AND t.balance_exhausted_at IS NOT NULL)
      ORDER BY p.created_at LIMIT $1`,
});

/** Placed pods ($1) start on their nodes ($2), by position, with a fresh fence. */
export const START_PLACED_PODS = statement("pods.start-placed", {
  params: ["uuid[]", "uuid[]"],
  columns: {},
  text: `UPDATE pods p SET status = 'starting', attempts = attempts + 1, fence = gen_random_uuid(), node_id = x.node_id, pending_reason = NULL,
              status_reason = 'placed; its node is starting the container', updated_at = now()
         FROM unnest($1::uuid[], $2::uuid[]) AS x(id, node_id)
        WHERE p.id = x.id AND p.status = 'pending'`,
});

/** GPUs ($1) allocated to pods ($2), by position. */
export const ALLOCATE_POD_GPUS = statement("pods.allocate-gpus", {
  params: ["uuid[]", "uuid[]"],
  columns: {},
  text: `UPDATE gpus g SET allocated_pod_id = x.pod_id, updated_at = now() FROM unnest($1::uuid[], $2::uuid[]) AS x(gpu_id, pod_id) WHERE g.id = x.gpu_id`,
});

/** A placement per started pod ($1): its attempt, fence, node and GPUs in index order. */
export const RECORD_POD_PLACEMENTS = statement("pods.record-placements", {
  params: ["uuid[]"],
  columns: {},
  text: `INSERT INTO pod_placements (pod_id, attempt, fence, node_id, gpu_type, gpu_ids, started_at)
       SELECT p.id, p.attempts, p.fence, p.node_id, p.gpu_type, array_agg(g.id ORDER BY g.index), clock_timestamp()
         FROM pods p JOIN gpus g ON g.allocated_pod_id = p.id WHERE p.id = ANY($1::uuid[]) GROUP BY p.id`,
});

export const RECORD_PODS_PLACED = statement("pods.record-placed", {
  params: ["uuid[]"],
  columns: {},
  text: `INSERT INTO pod_events (pod_id, from_status, to_status, reason, actor)
       SELECT p.id, 'pending', 'starting', 'placed on ' || n.hostname, 'scheduler' FROM pods p JOIN nodes n ON n.id = p.node_id WHERE p.id = ANY($1::uuid[])`,
});

/** Why each pod ($1) still waits ($2), by position; written only when it changed. */
export const SET_POD_PENDING_REASONS = statement("pods.set-pending-reasons", {
  params: ["uuid[]", "text[]"],
  columns: {},
  text: `UPDATE pods p SET pending_reason = x.reason, updated_at = now() FROM unnest($1::uuid[], $2::text[]) AS x(id, reason)
        WHERE p.id = x.id AND p.status = 'pending' AND p.pending_reason IS DISTINCT FROM x.reason`,
});
