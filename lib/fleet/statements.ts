import { statement } from "@/lib/db/statement";

// The fleet's raw statements (lib/db/statement.ts): each declares its parameters and row, checked
// against the migrated database by tests/integration/sql-statements.test.ts.

/** The fleet KPIs of API.md's dashboard. Utilization: mean over GPUs that reported in the last 5 minutes. */
export const FLEET_SUMMARY = statement("fleet.summary", {
  params: ["uuid?"],
  columns: {
    gpus_total: "int4",
    gpus_unhealthy: "int4",
    gpus_schedulable: "int4",
    gpus_allocated: "int4",
    utilization_avg_pct: "float8?",
    nodes_online: "int4",
    nodes_offline: "int4",
    nodes_quarantined: "int4",
  },
  text: `WITH g AS (
       SELECT g.id, g.status, (g.allocated_job_id IS NOT NULL OR g.allocated_replica_id IS NOT NULL OR g.allocated_pod_id IS NOT NULL) AS allocated, n.status AS node_status FROM gpus g JOIN nodes n ON n.id = g.node_id
        WHERE ($1::uuid IS NULL OR n.cluster_id = $1::uuid) AND g.status <> 'missing'
     ), recent AS (
       SELECT sum(m.utilization_sum) / nullif(sum(m.samples), 0) AS util
         FROM gpu_metrics_1m m JOIN g ON g.id = m.gpu_id WHERE m.bucket >= date_trunc('minute', now()) - interval '5 minutes'
     )
     SELECT (SELECT count(*) FROM g)::int AS gpus_total,
            (SELECT count(*) FROM g WHERE status = 'unhealthy')::int AS gpus_unhealthy,
            (SELECT count(*) FROM g WHERE status = 'available' AND node_status = 'available' AND NOT allocated)::int AS gpus_schedulable,
            (SELECT count(*) FROM g WHERE allocated)::int AS gpus_allocated,
            (SELECT util FROM recent) AS utilization_avg_pct,
            (SELECT count(*) FROM nodes WHERE ($1::uuid IS NULL OR cluster_id = $1::uuid) AND status <> 'offline')::int AS nodes_online,
            (SELECT count(*) FROM nodes WHERE ($1::uuid IS NULL OR cluster_id = $1::uuid) AND status = 'offline')::int AS nodes_offline,
            (SELECT count(*) FROM nodes WHERE ($1::uuid IS NULL OR cluster_id = $1::uuid) AND status = 'quarantined')::int AS nodes_quarantined`,
});

/**
 * Every node and GPU (one row each; a node without GPUs has one row of NULL GPU columns) with each
 * GPU's last-minute utilization, its allocation and the reservation holding its node. $2 narrows
 * it to the rack $3/$4 (NULL: the nodes registered without one).
 */
export const FLEET_FLOOR = statement("fleet.floor", {
  params: ["uuid?", "bool", "text?", "text?"],
  columns: {
    node_id: "uuid",
    cluster_id: "uuid",
    cluster: "text",
    hostname: "text",
    pod: "text?",
    rack: "text?",
    node_status: "text",
    reserved_by: "text?",
    gpu_id: "uuid?",
    idx: "int4?",
    gpu_status: "text?",
    allocated: "bool?",
    util: "float8?",
    temp: "float4?",
  },
  text: `WITH latest AS (
       SELECT DISTINCT ON (gpu_id) gpu_id, utilization_sum / samples AS util, temperature_max AS temp
         FROM gpu_metrics_1m WHERE bucket >= date_trunc('minute', now()) - interval '3 minutes'
        ORDER BY gpu_id, bucket DESC
     ), held AS (
       SELECT DISTINCT ON (rn.node_id) rn.node_id, t.name AS reserved_by
         FROM reservation_nodes rn JOIN tenants t ON t.id = rn.tenant_id
        WHERE rn.live AND rn.starts_at <= now() AND rn.ends_at > now()
     )
     SELECT n.id AS node_id, c.id AS cluster_id, c.name AS cluster, n.hostname, n.pod, n.rack, n.status AS node_status, h.reserved_by,
            g.id AS gpu_id, g.index AS idx, g.status AS gpu_status,
            num_nonnulls(g.allocated_job_id, g.allocated_replica_id, g.allocated_pod_id) > 0 AS allocated, l.util, l.temp
       FROM nodes n
       JOIN clusters c ON c.id = n.cluster_id
       LEFT JOIN held h ON h.node_id = n.id
       LEFT JOIN gpus g ON g.node_id = n.id AND g.status <> 'missing'
       LEFT JOIN latest l ON l.gpu_id = g.id
      WHERE ($1::uuid IS NULL OR n.cluster_id = $1::uuid)
        AND (NOT $2::bool OR (n.pod IS NOT DISTINCT FROM $3 AND n.rack IS NOT DISTINCT FROM $4))
        -- a provider instance that ended is no longer on the floor (its node keeps its history)
        AND NOT EXISTS (SELECT 1 FROM provider_instances pi WHERE pi.node_id = n.id AND pi.status IN ('terminated', 'failed'))
      ORDER BY c.name, n.pod NULLS LAST, n.rack NULLS LAST, n.hostname, g.index`,
});

/** Node and GPU counts per cluster. */
export const CLUSTER_COUNTS = statement("fleet.cluster-counts", {
  params: [],
  columns: { cluster_id: "uuid", nodes: "int4", offline: "int4", gpus: "int4", unhealthy: "int4" },
  text: `SELECT n.cluster_id, count(DISTINCT n.id)::int AS nodes, count(DISTINCT n.id) FILTER (WHERE n.status = 'offline')::int AS offline,
            count(g.id) FILTER (WHERE g.status <> 'missing')::int AS gpus, count(g.id) FILTER (WHERE g.status = 'unhealthy')::int AS unhealthy
       FROM nodes n LEFT JOIN gpus g ON g.node_id = n.id GROUP BY 1`,
});

/** Locks a node's row for a state change. */
export const LOCK_NODE = statement("fleet.lock-node", {
  params: ["uuid"],
  columns: { id: "uuid", cluster_id: "uuid", status: "text", status_before_offline: "text?", handover_due_since: "timestamptz?" },
  text: `
    SELECT id, cluster_id, status, status_before_offline, handover_due_since FROM nodes WHERE id = $1::uuid FOR UPDATE`,
});

/**
 * Nodes silent for more than $1 seconds go offline (remembering the state they return to), with
 * their events ($2: why). A node being provisioned is expected to be silent and stays as it is.
 */
export const MARK_OFFLINE_NODES = statement("fleet.mark-offline-nodes", {
  params: ["int4", "text"],
  columns: { node_id: "uuid" },
  text: `
    WITH stale AS (
      SELECT id, status FROM nodes
       WHERE status NOT IN ('offline', 'provisioning') AND COALESCE(last_heartbeat_at, created_at) < now() - make_interval(secs => $1::int)
       FOR UPDATE SKIP LOCKED
    ), marked AS (
      UPDATE nodes n SET status = 'offline', status_before_offline = s.status, updated_at = now()
        FROM stale s WHERE n.id = s.id
      RETURNING n.id, s.status AS from_status
    )
    INSERT INTO node_events (node_id, from_status, to_status, reason, actor)
    SELECT id, from_status, 'offline', $2, 'system' FROM marked
    RETURNING node_id`,
});

/** A node returned to service: its GPUs' hardware flags are cleared. */
export const CLEAR_UNHEALTHY_GPUS = statement("fleet.clear-unhealthy-gpus", {
  params: ["uuid"],
  columns: {},
  text: `
        UPDATE gpus SET status = 'available', unhealthy_reason = NULL, ecc_uncorrected = NULL, remap_failure = false, updated_at = now()
         WHERE node_id = $1::uuid AND status = 'unhealthy'`,
});

/**
 * What a heartbeat says of the node $8's GPUs, one report per element of $2–$7 (uuid, kind,
 * reason, ECC count, remap failure, last XID); $1 is the reason an agent-reported fault carries.
 * Only rows that change are written.
 */
export const APPLY_GPU_REPORTS = statement("fleet.apply-gpu-reports", {
  params: ["text", "text[]", "text[]", "text[]", "int4[]", "bool[]", "int4[]", "uuid"],
  columns: {},
  text: `
        UPDATE gpus g SET
          status = CASE WHEN x.kind <> 'healthy' THEN 'unhealthy'
                        WHEN g.unhealthy_reason = $1 THEN 'available' ELSE g.status END,
          unhealthy_reason = CASE WHEN x.kind = 'hardware' THEN x.reason
                                  WHEN x.kind = 'agent' THEN COALESCE(g.unhealthy_reason, $1)
                                  WHEN g.unhealthy_reason = $1 THEN NULL ELSE g.unhealthy_reason END,
          ecc_uncorrected = CASE WHEN x.kind = 'hardware' THEN x.ecc ELSE g.ecc_uncorrected END,
          remap_failure = CASE WHEN x.kind = 'hardware' THEN x.remap ELSE g.remap_failure END,
          last_xid = COALESCE(x.last_xid, g.last_xid),
          last_xid_at = CASE WHEN x.last_xid IS NULL THEN g.last_xid_at ELSE now() END,
          updated_at = now()
          FROM unnest($2::text[], $3::text[], $4::text[],
                      $5::int[], $6::boolean[], $7::int[])
               AS x(uuid, kind, reason, ecc, remap, last_xid)
         WHERE g.node_id = $8::uuid AND g.uuid = x.uuid AND g.status <> 'missing'
           AND (x.kind <> 'healthy' OR g.unhealthy_reason = $1 OR x.last_xid IS NOT NULL)`,
});

/** Registers the node ($1 cluster, $2 hostname, …) or updates the one of that hostname; says which. */
export const UPSERT_NODE = statement("fleet.upsert-node", {
  params: ["uuid", "text", "text?", "text?", "int4?", "int4?", "text?", "bool", "text?", "text?", "text?", "text?", "text?", "text?"],
  columns: { id: "uuid", inserted: "bool" },
  text: `
      INSERT INTO nodes (cluster_id, hostname, pod, rack, cpu_cores, memory_gb, agent_version,
                         containers, container_runtime, os, kernel, driver_version, cuda_version, address)
      VALUES ($1::uuid, $2, $3, $4,
              $5::int, $6::int, $7,
              $8, $9, $10, $11,
              $12, $13, $14)
      ON CONFLICT (cluster_id, hostname) DO UPDATE SET
        pod = EXCLUDED.pod, rack = EXCLUDED.rack, cpu_cores = EXCLUDED.cpu_cores,
        memory_gb = EXCLUDED.memory_gb, agent_version = EXCLUDED.agent_version,
        containers = EXCLUDED.containers, container_runtime = EXCLUDED.container_runtime, os = EXCLUDED.os, kernel = EXCLUDED.kernel,
        driver_version = EXCLUDED.driver_version, cuda_version = EXCLUDED.cuda_version,
        -- an agent that does not say keeps the address it reported before
        address = COALESCE(EXCLUDED.address, nodes.address), updated_at = now()
      RETURNING id, (xmax = 0) AS inserted`,
});

/** GPUs of these UUIDs ($2) registered on another node than $3: in another cluster than $1, or held by work. */
export const GPUS_REGISTERED_ELSEWHERE = statement("fleet.gpus-registered-elsewhere", {
  params: ["uuid", "text[]", "uuid"],
  columns: { uuid: "text", other_cluster: "bool", held: "bool", hostname: "text" },
  text: `
      SELECT g.uuid, n.cluster_id <> $1::uuid AS other_cluster,
             (g.allocated_job_id IS NOT NULL OR g.allocated_replica_id IS NOT NULL OR g.allocated_pod_id IS NOT NULL) AS held, n.hostname
        FROM gpus g JOIN nodes n ON n.id = g.node_id
       WHERE g.uuid = ANY($2::text[]) AND g.node_id <> $3::uuid`,
});

/** The node $1's GPUs that left its inventory ($2) go missing, so a replacement can take their slot. */
export const MARK_MISSING_GPUS = statement("fleet.mark-missing-gpus", {
  params: ["uuid", "text[]"],
  columns: {},
  text: `
      UPDATE gpus SET status = 'missing', missing_since = now(), unhealthy_reason = NULL, updated_at = now()
       WHERE node_id = $1::uuid AND missing_since IS NULL AND NOT (uuid = ANY($2::text[]))`,
});

/** The node $1's inventory, one GPU per element of $2–$6 (uuid, index, type, model, memory): added, moved here, or present again. */
export const UPSERT_GPUS = statement("fleet.upsert-gpus", {
  params: ["uuid", "text[]", "int4[]", "text[]", "text[]", "int4[]"],
  columns: {},
  text: `
        INSERT INTO gpus (node_id, uuid, index, gpu_type, model, memory_total_mb)
        SELECT $1::uuid, t.uuid, t.idx, t.gpu_type, t.model, t.mem
          FROM unnest($2::text[], $3::int[], $4::text[],
                      $5::text[], $6::int[])
               AS t(uuid, idx, gpu_type, model, mem)
        ON CONFLICT (uuid) DO UPDATE SET
          node_id = EXCLUDED.node_id, index = EXCLUDED.index, gpu_type = EXCLUDED.gpu_type, model = EXCLUDED.model,
          memory_total_mb = EXCLUDED.memory_total_mb,
          status = CASE WHEN gpus.status = 'missing' THEN 'available' ELSE gpus.status END,
          missing_since = NULL, updated_at = now()`,
});

/** The node $2 of the cluster $1 as registered, locked (a registration compares its address). */
export const LOCK_NODE_BY_HOSTNAME = statement("fleet.lock-node-by-hostname", {
  params: ["uuid", "text"],
  columns: { id: "uuid", address: "text?" },
  text: `SELECT id, address FROM nodes WHERE cluster_id = $1::uuid AND hostname = $2 FOR UPDATE`,
});

/**
 * Operators hear that the node $1 changed its address ($2 dedupe key, $3 hostname, $4 cluster,
 * $5 message, $6 details): where tenants' traffic and SSH go. Resolved once acknowledged.
 */
export const FIRE_NODE_ADDRESS_CHANGED = statement("fleet.fire-node-address-changed", {
  params: ["uuid", "text", "text", "uuid", "text", "jsonb"],
  columns: { id: "text" },
  text: `INSERT INTO alert_events (rule_type, dedupe_key, subject_type, subject_id, subject_label, cluster_id, node_id, severity, message, details)
         VALUES ('node_address_changed', $2, 'node', $1::uuid::text, $3, $4::uuid, $1::uuid, 'warning', $5, $6::jsonb)
         ON CONFLICT (dedupe_key) WHERE status = 'firing' DO UPDATE SET last_seen_at = now() RETURNING id::text`,
});
