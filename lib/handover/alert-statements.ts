import { statement } from "@/lib/db/statement";

// The alerts of handovers and attestation keys: one firing event per node and kind, its message
// kept current; operators' (no tenant), critical.

/** A node's handover failed ($2 message, $3 details) and it was quarantined: node $1. */
export const FIRE_HANDOVER_ALERT = statement("handover.fire-alert", {
  params: ["uuid", "text", "jsonb"],
  columns: { id: "uuid" },
  text: `
    INSERT INTO alert_events (rule_type, dedupe_key, subject_type, subject_id, subject_label, cluster_id, node_id, severity, message, details)
    SELECT 'handover_failed', 'handover_failed:' || n.id, 'node', n.id::text, n.hostname, n.cluster_id, n.id, 'critical', $2::text, $3::jsonb
      FROM nodes n WHERE n.id = $1::uuid
    ON CONFLICT (dedupe_key) WHERE status = 'firing' DO UPDATE SET last_seen_at = now(), message = EXCLUDED.message, details = EXCLUDED.details
    RETURNING id`,
});

/** The node ($1) presented another attestation key than its pinned one ($2 message, $3 details). */
export const FIRE_KEY_MISMATCH_ALERT = statement("handover.fire-key-mismatch-alert", {
  params: ["uuid", "text", "jsonb"],
  columns: { id: "uuid" },
  text: `
    INSERT INTO alert_events (rule_type, dedupe_key, subject_type, subject_id, subject_label, cluster_id, node_id, severity, message, details)
    SELECT 'attestation_key_mismatch', 'attestation_key_mismatch:' || n.id, 'node', n.id::text, n.hostname, n.cluster_id, n.id, 'critical', $2::text, $3::jsonb
      FROM nodes n WHERE n.id = $1::uuid
    ON CONFLICT (dedupe_key) WHERE status = 'firing' DO UPDATE SET last_seen_at = now(), message = EXCLUDED.message, details = EXCLUDED.details
    RETURNING id`,
});

/** Resolves the node's ($2) firing alert of a kind ($1), its message ending with $3. */
export const RESOLVE_NODE_ALERT = statement("handover.resolve-alert", {
  params: ["text", "uuid", "text"],
  columns: { id: "uuid" },
  text: `
    UPDATE alert_events SET status = 'resolved', resolved_at = now(), message = message || $3::text
     WHERE dedupe_key = $1::text || ':' || $2::uuid::text AND status = 'firing'
    RETURNING id`,
});
