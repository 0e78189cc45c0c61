import { statement } from "@/lib/db/statement";

// The handover domain's statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts.

const SETTINGS_COLUMNS = {
  cluster_id: "uuid",
  wipe_command: "text?",
  wipe_timeout_s: "int4",
  attestation: "text",
  attestation_policy_id: "uuid?",
  attestation_policy_name: "text?",
  attestation_timeout_s: "int4",
  updated_by: "text?",
  updated_at: "timestamptz?",
} as const;

/** A cluster's ($1) handover settings, its defaults when it has no row (NULL: no such cluster). */
export const HANDOVER_SETTINGS = statement("handover.settings", {
  params: ["uuid"],
  columns: SETTINGS_COLUMNS,
  text: `
    SELECT c.id AS cluster_id, s.wipe_command, COALESCE(s.wipe_timeout_s, 1800) AS wipe_timeout_s, COALESCE(s.attestation, 'required') AS attestation,
           s.attestation_policy_id, p.name AS attestation_policy_name, COALESCE(s.attestation_timeout_s, 600) AS attestation_timeout_s,
           s.updated_by, s.updated_at
      FROM clusters c LEFT JOIN cluster_handover_settings s ON s.cluster_id = c.id LEFT JOIN attestation_policies p ON p.id = s.attestation_policy_id
     WHERE c.id = $1::uuid`,
});

export const PUT_HANDOVER_SETTINGS = statement("handover.put-settings", {
  params: ["uuid", "text?", "int4", "text", "uuid?", "int4", "text"],
  columns: {},
  text: `
    INSERT INTO cluster_handover_settings (cluster_id, wipe_command, wipe_timeout_s, attestation, attestation_policy_id, attestation_timeout_s, updated_by)
    VALUES ($1::uuid, $2::text, $3::int4, $4::text, $5::uuid, $6::int4, $7::text)
    ON CONFLICT (cluster_id) DO UPDATE SET wipe_command = EXCLUDED.wipe_command, wipe_timeout_s = EXCLUDED.wipe_timeout_s,
           attestation = EXCLUDED.attestation, attestation_policy_id = EXCLUDED.attestation_policy_id,
           attestation_timeout_s = EXCLUDED.attestation_timeout_s, updated_by = EXCLUDED.updated_by, updated_at = now()`,
});

/** What a node ($1) in a handover is to do next: its running workflow, its state, what it reported, its cluster's settings. */
export const HANDOVER_STATE_OF_NODE = statement("handover.state-of-node", {
  params: ["uuid"],
  columns: {
    workflow_id: "uuid",
    kind: "text",
    status: "text",
    status_before_offline: "text?",
    wipe_command: "text?",
    wipe_timeout_s: "int4",
    attestation: "text",
    wiped: "bool",
    attested: "bool",
  },
  text: `
    SELECT w.id AS workflow_id, w.kind, n.status, n.status_before_offline, s.wipe_command, COALESCE(s.wipe_timeout_s, 1800) AS wipe_timeout_s,
           COALESCE(s.attestation, 'required') AS attestation,
           EXISTS (SELECT 1 FROM node_wipe_reports r WHERE r.workflow_id = w.id) AS wiped,
           EXISTS (SELECT 1 FROM attestations a WHERE a.workflow_id = w.id) AS attested
      FROM nodes n JOIN node_workflows w ON w.node_id = n.id AND w.status = 'running'
      LEFT JOIN cluster_handover_settings s ON s.cluster_id = n.cluster_id
     WHERE n.id = $1::uuid`,
});

export const INSERT_WIPE_REPORT = statement("handover.insert-wipe-report", {
  params: ["uuid", "uuid", "jsonb", "text", "text"],
  columns: { id: "int8", created_at: "timestamptz" },
  text: `
    INSERT INTO node_wipe_reports (node_id, workflow_id, devices, result, reported_by) VALUES ($1::uuid, $2::uuid, $3::jsonb, $4::text, $5::text)
    ON CONFLICT (workflow_id) DO NOTHING
    RETURNING id, created_at`,
});

export const WIPE_REPORT_OF_WORKFLOW = statement("handover.wipe-report-of-workflow", {
  params: ["uuid"],
  columns: { id: "int8", devices: "jsonb", result: "text", reported_by: "text", created_at: "timestamptz" },
  text: `SELECT id, devices, result, reported_by, created_at FROM node_wipe_reports WHERE workflow_id = $1::uuid`,
});

/** The node's ($1) live state and what holds its GPUs: what the release step waits on. */
export const NODE_FOR_HANDOVER = statement("handover.node", {
  params: ["uuid"],
  columns: {
    id: "uuid",
    cluster_id: "uuid",
    hostname: "text",
    status: "text",
    status_before_offline: "text?",
    allocated: "int4",
    gpus: "jsonb",
  },
  text: `
    SELECT n.id, n.cluster_id, n.hostname, n.status, n.status_before_offline,
           (SELECT count(*) FROM gpus g WHERE g.node_id = n.id AND (g.allocated_job_id IS NOT NULL OR g.allocated_replica_id IS NOT NULL OR g.allocated_pod_id IS NOT NULL))::int AS allocated,
           COALESCE((SELECT jsonb_agg(jsonb_build_object('uuid', g.uuid, 'index', g.index) ORDER BY g.index) FROM gpus g WHERE g.node_id = n.id AND g.missing_since IS NULL), '[]') AS gpus
      FROM nodes n WHERE n.id = $1::uuid`,
});

/**
 * Holdings on the node ($1) that began while it was in its handover (from $2: the end of the
 * tenancy that started it, or its own start): nobody could use the node yet, so each holding
 * begins, and is billed, from now. Only a holding nothing was billed for moves (reservation_nodes'
 * guard lets a window shrink).
 */
export const START_HOLDINGS_AFTER_HANDOVER = statement("handover.start-holdings-after-handover", {
  params: ["uuid", "timestamptz"],
  columns: { id: "uuid" },
  text: `
    UPDATE reservation_nodes h SET starts_at = LEAST(now(), h.ends_at - interval '1 millisecond')
     WHERE h.node_id = $1::uuid AND h.live AND h.closed_at IS NULL AND h.starts_at < now() AND h.starts_at >= $2::timestamptz
       AND h.ends_at > now() AND NOT EXISTS (SELECT 1 FROM usage_events u WHERE u.reservation_node_id = h.id)
    RETURNING h.id`,
});

/**
 * Nodes of the reservation ($1) whose holding had begun and was closed by this transaction (its
 * end or release; closed_at is now(), rounded to the column's milliseconds): their whole-node
 * tenancy has just ended. A node the reservation let go of earlier (swapped out when it left
 * service) is not among them.
 */
export const TENANCY_NODES_OF_RESERVATION = statement("handover.tenancy-nodes-of-reservation", {
  params: ["uuid"],
  columns: { node_id: "uuid", ended_at: "timestamptz" },
  text: `
    SELECT node_id, max(ends_at) AS ended_at FROM reservation_nodes
     WHERE reservation_id = $1::uuid AND live AND starts_at <= now() AND closed_at >= now() - interval '1 millisecond'
     GROUP BY node_id ORDER BY node_id`,
});
