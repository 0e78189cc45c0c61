import { statement } from "@/lib/db/statement";

// The provisioning runner's own statements (lib/provisioning). Steps and workflows are written
// through lib/fleet/node-workflows.ts; what is here writes a running step's progress between
// visits (fenced by node_workflow_steps' trigger: the row carries the writer's lease token), reads
// when the node's agent was last heard from, and fires or resolves the node's provisioning alert.

/** A worker records a running step's progress ($4 details, $5 message) under its token ($3, node $2). */
export const UPDATE_RUNNING_STEP = statement("provisioning.update-running-step", {
  params: ["int8", "uuid", "int8", "jsonb", "text?"],
  columns: { id: "int8" },
  text: `
    UPDATE node_workflow_steps SET details = $4::jsonb, message = COALESCE(left($5::text, 4000), message), lease_token = $3::int8
     WHERE id = $1::int8 AND node_id = $2::uuid AND status = 'running'
    RETURNING id`,
});

/** When the node's ($1) agent was last heard from (a registration is followed by its heartbeat). */
export const AGENT_LAST_SEEN = statement("provisioning.agent-last-seen", {
  params: ["uuid"],
  columns: { last_heartbeat_at: "timestamptz?", hostname: "text", cluster_id: "uuid" },
  text: `SELECT last_heartbeat_at, hostname, cluster_id FROM nodes WHERE id = $1::uuid`,
});

/** Fires the node's ($1) provisioning alert, or keeps the firing one current: $2 message, $3 details. Answers it when new. */
export const FIRE_PROVISIONING_ALERT = statement("provisioning.fire-alert", {
  params: ["uuid", "text", "jsonb"],
  columns: { id: "uuid", inserted: "bool" },
  text: `
    INSERT INTO alert_events (rule_type, dedupe_key, subject_type, subject_id, subject_label, cluster_id, node_id, severity, message, details)
    SELECT 'provisioning_failed', 'provisioning_failed:' || n.id, 'node', n.id::text, n.hostname, n.cluster_id, n.id, 'critical', $2::text, $3::jsonb
      FROM nodes n WHERE n.id = $1::uuid
    ON CONFLICT (dedupe_key) WHERE status = 'firing'
    DO UPDATE SET last_seen_at = now(), message = EXCLUDED.message, details = EXCLUDED.details
    RETURNING id, (xmax = 0) AS inserted`,
});

/** Resolves the node's ($1) firing provisioning alert, its message ending with $2. */
export const RESOLVE_PROVISIONING_ALERT = statement("provisioning.resolve-alert", {
  params: ["uuid", "text"],
  columns: { id: "uuid" },
  text: `
    UPDATE alert_events SET status = 'resolved', resolved_at = now(), message = message || $2::text
     WHERE dedupe_key = 'provisioning_failed:' || $1::uuid::text AND status = 'firing'
    RETURNING id`,
});
