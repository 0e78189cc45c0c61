import { statement } from "@/lib/db/statement";

// The Slurm bridge's raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts.

/** A cluster's kind (gpu: node agents; slurm: a Slurm bridge). */
export const CLUSTER_KIND = statement("slurm.cluster-kind", {
  params: ["uuid"],
  columns: { kind: "text" },
  text: `SELECT kind FROM clusters WHERE id = $1::uuid`,
});

/** A node's Slurm record, locked for the report that changes it (none yet for a node never reported). */
export const LOCK_SLURM_NODE = statement("slurm.lock-node", {
  params: ["uuid"],
  columns: {
    state: "text",
    mirrored_status: "text?",
    foreign_gpus: "int4",
    cpus: "int4?",
    cpus_alloc: "int4?",
    memory_mb: "int4?",
    memory_alloc_mb: "int4?",
  },
  text: `SELECT state, mirrored_status, foreign_gpus, cpus, cpus_alloc, memory_mb, memory_alloc_mb FROM slurm_nodes WHERE node_id = $1::uuid FOR UPDATE`,
});

/**
 * What Slurm says of a node: its state and reason always; its inventory (partitions, CPUs, memory,
 * GRES) when the report carries it ($6 … $10 NULL keep what is there). state_since moves only when
 * the state changes.
 */
export const UPSERT_SLURM_NODE = statement("slurm.upsert-node", {
  params: ["uuid", "text", "text?", "text?", "timestamptz?", "text[]?", "int4?", "int4?", "int4?", "int4?", "text?"],
  columns: {},
  text: `
    INSERT INTO slurm_nodes (node_id, state, reason, reason_by, reason_at, partitions, cpus, cpus_alloc, memory_mb, memory_alloc_mb, gres)
    VALUES ($1::uuid, $2, $3, $4, $5, COALESCE($6::text[], '{}'), $7, $8, $9, $10, $11)
    ON CONFLICT (node_id) DO UPDATE SET
      state = EXCLUDED.state, reason = EXCLUDED.reason, reason_by = EXCLUDED.reason_by, reason_at = EXCLUDED.reason_at,
      partitions = COALESCE($6::text[], slurm_nodes.partitions),
      cpus = COALESCE(EXCLUDED.cpus, slurm_nodes.cpus),
      cpus_alloc = COALESCE(EXCLUDED.cpus_alloc, slurm_nodes.cpus_alloc),
      memory_mb = COALESCE(EXCLUDED.memory_mb, slurm_nodes.memory_mb),
      memory_alloc_mb = COALESCE(EXCLUDED.memory_alloc_mb, slurm_nodes.memory_alloc_mb),
      gres = COALESCE(EXCLUDED.gres, slurm_nodes.gres),
      state_since = CASE WHEN slurm_nodes.state = EXCLUDED.state THEN slurm_nodes.state_since ELSE now() END,
      updated_at = now()`,
});

/** The mirror's own status for a node, and the foreign load Slurm reports on it. */
export const SET_SLURM_NODE_LOAD = statement("slurm.set-node-load", {
  params: ["uuid", "text?", "int4", "int4", "jsonb"],
  columns: {},
  text: `
    UPDATE slurm_nodes SET mirrored_status = $2, foreign_gpus = $3, foreign_unplaced = $4, foreign_jobs = $5::jsonb, updated_at = now()
     WHERE node_id = $1::uuid`,
});

/** A node's present GPUs with what holds them, locked (their foreign marks are about to change). */
export const LOCK_NODE_GPU_HOLDS = statement("slurm.lock-node-gpu-holds", {
  params: ["uuid"],
  columns: { id: "uuid", index: "int4", allocated: "bool", foreign_holder: "text?" },
  text: `
    SELECT id, index, (allocated_job_id IS NOT NULL OR allocated_replica_id IS NOT NULL OR allocated_pod_id IS NOT NULL) AS allocated, foreign_holder
      FROM gpus WHERE node_id = $1::uuid AND status <> 'missing' ORDER BY index FOR UPDATE`,
});

/** Marks (or clears) foreign holds; a GPU GPUForge's own work took meanwhile is left as it is. */
export const SET_FOREIGN_HOLDERS = statement("slurm.set-foreign-holders", {
  params: ["uuid", "uuid[]", "text[]"],
  columns: {},
  text: `
    UPDATE gpus g SET foreign_holder = x.holder, updated_at = now()
      FROM unnest($2::uuid[], $3::text[]) AS x(id, holder)
     WHERE g.id = x.id AND g.node_id = $1::uuid
       AND g.allocated_job_id IS NULL AND g.allocated_replica_id IS NULL AND g.allocated_pod_id IS NULL`,
});

/** Why the node is in its status now: the reason of the event that put it there. */
export const STATUS_REASON = statement("slurm.status-reason", {
  params: ["uuid", "text"],
  columns: { reason: "text" },
  text: `SELECT reason FROM node_events WHERE node_id = $1::uuid AND to_status = $2 ORDER BY id DESC LIMIT 1`,
});

/**
 * The cluster's Slurm picture, from its active bridge. A report from another bridge is taken only
 * when the active one has been silent for $10 seconds (it then becomes the active one); otherwise
 * nothing is written and no row is returned.
 */
export const REPORT_SLURM_CLUSTER = statement("slurm.report-cluster", {
  params: ["uuid", "text", "text", "jsonb", "jsonb", "text", "text", "text?", "text?", "int4"],
  columns: { bridge_id: "text", inserted: "bool", took_over: "bool" },
  text: `
    WITH before AS (SELECT bridge_id FROM slurm_clusters WHERE cluster_id = $1::uuid)
    INSERT INTO slurm_clusters AS s (cluster_id, slurm_cluster_name, slurm_version, partitions, settings, container_mode, bridge_id, bridge_host, bridge_version, reported_at)
    VALUES ($1::uuid, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8, $9, now())
    ON CONFLICT (cluster_id) DO UPDATE SET
      slurm_cluster_name = EXCLUDED.slurm_cluster_name, slurm_version = EXCLUDED.slurm_version, partitions = EXCLUDED.partitions,
      settings = EXCLUDED.settings, container_mode = EXCLUDED.container_mode, bridge_id = EXCLUDED.bridge_id,
      bridge_host = EXCLUDED.bridge_host, bridge_version = EXCLUDED.bridge_version, reported_at = now()
     WHERE s.bridge_id = EXCLUDED.bridge_id OR s.reported_at < now() - make_interval(secs => $10::int)
    RETURNING s.bridge_id, (xmax = 0) AS inserted, COALESCE((SELECT bridge_id FROM before) <> s.bridge_id, false) AS took_over`,
});

/** The active bridge of a cluster (for a refusal's message). */
export const ACTIVE_BRIDGE = statement("slurm.active-bridge", {
  params: ["uuid"],
  columns: { bridge_id: "text", bridge_host: "text?", reported_at: "timestamptz" },
  text: `SELECT bridge_id, bridge_host, reported_at FROM slurm_clusters WHERE cluster_id = $1::uuid`,
});

/** A job and its placement's Slurm record, the job locked: what a fenced report is checked against. */
export const LOCK_JOB_FOR_SLURM = statement("slurm.lock-job", {
  params: ["uuid", "int4"],
  columns: {
    tenant_id: "uuid",
    status: "text",
    attempts: "int4",
    fence: "text?",
    gpu_type: "text",
    gpu_count: "int4",
    duration_s: "int4?",
    tracked: "bool",
    slurm_job_id: "text?",
    state: "text?",
    reason: "text?",
    started_at: "timestamptz?",
  },
  text: `
    SELECT j.tenant_id, j.status, j.attempts, j.fence::text AS fence, j.gpu_type, j.gpu_count, j.duration_s,
           s.job_id IS NOT NULL AS tracked, s.slurm_job_id, s.state, s.reason, s.started_at
      FROM jobs j LEFT JOIN slurm_jobs s ON s.job_id = j.id AND s.attempt = $2
     WHERE j.id = $1::uuid FOR UPDATE OF j`,
});

/** What the bridge reports of a placement's Slurm job; absent values keep what is recorded. */
export const UPDATE_SLURM_JOB = statement("slurm.update-job", {
  params: ["uuid", "int4", "text", "text?", "text?", "text?", "text?", "text?", "text?", "timestamptz?", "timestamptz?", "timestamptz?"],
  columns: {},
  text: `
    UPDATE slurm_jobs SET state = $3, reason = $4,
           slurm_job_id = COALESCE($5, slurm_job_id), nodes = COALESCE($6, nodes), partition = COALESCE($7, partition),
           exit_code = COALESCE($8, exit_code), account = COALESCE($9, account),
           submitted_at = COALESCE(submitted_at, $10), started_at = COALESCE(started_at, $11),
           ended_at = CASE WHEN $12::timestamptz IS NULL THEN ended_at ELSE COALESCE(ended_at, GREATEST($12, COALESCE(started_at, $11, $12))) END,
           updated_at = now()
     WHERE job_id = $1::uuid AND attempt = $2`,
});

export const INSERT_SLURM_JOB_EVENT = statement("slurm.insert-job-event", {
  params: ["uuid", "int4", "text", "text?", "text?"],
  columns: {},
  text: `INSERT INTO slurm_job_events (job_id, attempt, state, reason, slurm_job_id) VALUES ($1::uuid, $2, $3, $4, $5)`,
});

/**
 * The run starts when Slurm started it: the job's and its placement's start move to Slurm's
 * StartTime, never before the placement nor after now. Returns the start recorded.
 */
export const MOVE_RUN_START = statement("slurm.move-run-start", {
  params: ["uuid", "int4", "timestamptz"],
  columns: { started_at: "timestamptz" },
  text: `
    WITH p AS (
      UPDATE job_placements SET started_at = GREATEST(started_at, LEAST($3::timestamptz, now()))
       WHERE job_id = $1::uuid AND attempt = $2 AND ended_at IS NULL
      RETURNING started_at
    ), j AS (
      UPDATE jobs SET started_at = (SELECT started_at FROM p), updated_at = now()
       WHERE id = $1::uuid AND attempts = $2 AND status = 'running' AND EXISTS (SELECT 1 FROM p)
      RETURNING started_at
    ), s AS (
      UPDATE slurm_jobs SET started_at = (SELECT started_at FROM p), ended_at = CASE WHEN ended_at IS NULL THEN NULL ELSE GREATEST(ended_at, (SELECT started_at FROM p)) END
       WHERE job_id = $1::uuid AND attempt = $2 AND EXISTS (SELECT 1 FROM p)
    )
    SELECT started_at FROM j`,
});

/** The tenant's Slurm account, if it has one. */
export const TENANT_ACCOUNT = statement("slurm.tenant-account", {
  params: ["uuid"],
  columns: { account: "text" },
  text: `SELECT account FROM slurm_accounts WHERE tenant_id = $1::uuid`,
});

/** Gives the tenant this account unless it has one or another tenant has the name (no row then). */
export const CLAIM_ACCOUNT = statement("slurm.claim-account", {
  params: ["uuid", "text"],
  columns: { account: "text" },
  text: `INSERT INTO slurm_accounts (tenant_id, account) VALUES ($1::uuid, $2) ON CONFLICT DO NOTHING RETURNING account`,
});

/** The nodes and GPUs a running job holds now, by node (its placement's Slurm submission). */
export const PLACEMENT_NODES = statement("slurm.placement-nodes", {
  params: ["uuid"],
  columns: { node_id: "uuid", hostname: "text", gpu_ids: "uuid[]" },
  text: `
    SELECT n.id AS node_id, n.hostname, array_agg(g.id ORDER BY g.index) AS gpu_ids
      FROM gpus g JOIN nodes n ON n.id = g.node_id
     WHERE g.allocated_job_id = $1::uuid GROUP BY n.id, n.hostname ORDER BY n.hostname`,
});
