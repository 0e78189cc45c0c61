import { statement } from "@/lib/db/statement";
import { LOCKED_RESERVATION } from "./statements";

// The statements of the reservations sweep and of moving work off reserved nodes
// (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts.

const DUE_TO_START = `status = 'confirmed' AND starts_at <= now() AND ends_at > now()`;
const DUE_TO_END = `status IN ('confirmed', 'active') AND ends_at <= now()`;

/** Reservations due to start, and one of them ($1) locked if it still is and no other sweep holds it. */
export const DUE_TO_START_IDS = statement("reservations.due-to-start", {
  params: [],
  columns: { id: "text" },
  text: `SELECT id::text FROM reservations WHERE ${DUE_TO_START} ORDER BY starts_at LIMIT 500`,
});
export const LOCK_DUE_TO_START = statement("reservations.lock-due-to-start", {
  params: ["uuid"],
  columns: LOCKED_RESERVATION,
  text: `SELECT id::text, tenant_id::text, status, starts_at, ends_at, gpu_type, node_count, degraded_at FROM reservations WHERE id = $1::uuid AND ${DUE_TO_START} FOR UPDATE SKIP LOCKED`,
});

/** Reservations due to end, and one of them ($1) locked if it still is and no other sweep holds it. */
export const DUE_TO_END_IDS = statement("reservations.due-to-end", {
  params: [],
  columns: { id: "text" },
  text: `SELECT id::text FROM reservations WHERE ${DUE_TO_END} ORDER BY starts_at LIMIT 500`,
});
export const LOCK_DUE_TO_END = statement("reservations.lock-due-to-end", {
  params: ["uuid"],
  columns: LOCKED_RESERVATION,
  text: `SELECT id::text, tenant_id::text, status, starts_at, ends_at, gpu_type, node_count, degraded_at FROM reservations WHERE id = $1::uuid AND ${DUE_TO_END} FOR UPDATE SKIP LOCKED`,
});

export const START_RESERVATION = statement("reservations.start", {
  params: ["uuid"],
  columns: {},
  text: `UPDATE reservations SET status = 'active', updated_at = now() WHERE id = $1::uuid`,
});

export const CLOSE_COMPLETED_HOLDINGS = statement("reservations.close-completed-holdings", {
  params: ["uuid"],
  columns: {},
  text: `UPDATE reservation_nodes SET closed_at = now(), close_reason = 'completed' WHERE reservation_id = $1::uuid AND live AND closed_at IS NULL`,
});

export const COMPLETE_RESERVATION = statement("reservations.complete", {
  params: ["uuid"],
  columns: {},
  text: `
      UPDATE reservations SET status = 'completed', ended_at = now(), end_reason = 'reached its end', degraded_at = NULL, degraded_reason = NULL, updated_at = now()
       WHERE id = $1::uuid`,
});

/** Running or upcoming reservations that are degraded, or hold a node in one of the states $1. */
export const RESERVATIONS_TO_REPAIR = statement("reservations.to-repair", {
  params: ["text[]"],
  columns: { id: "text" },
  text: `SELECT DISTINCT r.id::text FROM reservations r
      WHERE r.status IN ('confirmed', 'active') AND r.ends_at > now()
        AND (r.degraded_at IS NOT NULL OR EXISTS (
              SELECT 1 FROM reservation_nodes h JOIN nodes n ON n.id = h.node_id
               WHERE h.reservation_id = r.id AND h.live AND h.closed_at IS NULL
                 AND (n.status = ANY($1::text[]) OR n.status_before_offline = ANY($1::text[]))))`,
});

/** The reservation $1 to repair, locked unless another sweep holds it, with its tenant's name. */
export const LOCK_RESERVATION_TO_REPAIR = statement("reservations.lock-to-repair", {
  params: ["uuid"],
  columns: { ...LOCKED_RESERVATION, tenant_name: "text" },
  text: `
    SELECT r.id::text, r.tenant_id::text, r.status, r.starts_at, r.ends_at, r.gpu_type, r.node_count, r.degraded_at, t.name AS tenant_name
      FROM reservations r JOIN tenants t ON t.id = r.tenant_id
     WHERE r.id = $1::uuid AND r.status IN ('confirmed', 'active') AND r.ends_at > now() FOR UPDATE OF r SKIP LOCKED`,
});

/** The reservation $1's live holdings whose node is (or returns) in one of the states $2, locked. */
export const LOST_HOLDINGS = statement("reservations.lost-holdings", {
  params: ["uuid", "text[]"],
  columns: { id: "text", node_id: "text", hostname: "text", status: "text", started: "bool" },
  text: `
    SELECT h.id::text, h.node_id::text, n.hostname, COALESCE(n.status_before_offline, n.status) AS status, h.starts_at <= now() AS started
      FROM reservation_nodes h JOIN nodes n ON n.id = h.node_id
     WHERE h.reservation_id = $1::uuid AND h.live AND h.closed_at IS NULL
       AND (n.status = ANY($2::text[]) OR n.status_before_offline = ANY($2::text[]))
     FOR UPDATE OF h`,
});

/** A started holding ($2) whose node left service ends now ($1: why). */
export const END_LOST_HOLDING = statement("reservations.end-lost-holding", {
  params: ["text", "uuid"],
  columns: {},
  text: `
        UPDATE reservation_nodes SET ends_at = GREATEST(now(), starts_at + interval '1 millisecond'), closed_at = GREATEST(now(), starts_at + interval '1 millisecond'),
               close_reason = $1 WHERE id = $2::uuid`,
});

/** A holding ($2) whose node left service before its start is dropped ($1: why). */
export const DROP_LOST_HOLDING = statement("reservations.drop-lost-holding", {
  params: ["text", "uuid"],
  columns: {},
  text: `UPDATE reservation_nodes SET live = false, closed_at = now(), close_reason = $1 WHERE id = $2::uuid`,
});

/** The reservation $2 is degraded ($1: why). */
export const MARK_DEGRADED = statement("reservations.mark-degraded", {
  params: ["text", "uuid"],
  columns: {},
  text: `UPDATE reservations SET degraded_at = COALESCE(degraded_at, now()), degraded_reason = $1, updated_at = now() WHERE id = $2::uuid`,
});

/** The reservation $1's live holdings that run to its end ($2), with their nodes' places. */
export const HELD_NODES = statement("reservations.held-nodes", {
  params: ["uuid", "timestamptz"],
  columns: { node_id: "text", cluster_id: "text", pod: "text?", rack: "text?" },
  text: `
    SELECT h.node_id::text, n.cluster_id::text, n.pod, n.rack FROM reservation_nodes h JOIN nodes n ON n.id = h.node_id
     WHERE h.reservation_id = $1::uuid AND h.live AND h.closed_at IS NULL AND h.ends_at = $2`,
});

/** The cluster of the reservation $1's nodes (NULL before it held any). */
export const RESERVATION_CLUSTER = statement("reservations.cluster", {
  params: ["uuid"],
  columns: { cluster: "text?" },
  text: `
    SELECT (SELECT n.cluster_id::text FROM reservation_nodes h JOIN nodes n ON n.id = h.node_id WHERE h.reservation_id = $1::uuid LIMIT 1) AS cluster`,
});

/** The reservation $2 is short of nodes with none free ($1: the reason, unless one is given). */
export const MARK_SHORT = statement("reservations.mark-short", {
  params: ["text", "uuid"],
  columns: {},
  text: `UPDATE reservations SET degraded_at = COALESCE(degraded_at, now()), degraded_reason = COALESCE(degraded_reason, $1), updated_at = now() WHERE id = $2::uuid`,
});

export const NODE_HOSTNAMES = statement("reservations.node-hostnames", {
  params: ["uuid[]"],
  columns: { id: "text", hostname: "text" },
  text: `SELECT id::text, hostname FROM nodes WHERE id = ANY($1::uuid[])`,
});

/** The reservation $1 is whole again. */
export const MARK_WHOLE = statement("reservations.mark-whole", {
  params: ["uuid"],
  columns: {},
  text: `UPDATE reservations SET degraded_at = NULL, degraded_reason = NULL, updated_at = now() WHERE id = $1::uuid`,
});

export const SET_DEGRADED_REASON = statement("reservations.set-degraded-reason", {
  params: ["text", "uuid"],
  columns: {},
  text: `UPDATE reservations SET degraded_reason = $1, updated_at = now() WHERE id = $2::uuid`,
});

/** The tenant's alert about a reservation ($1 dedupe key, $2 id, $3 label, $4 tenant, $5 message): one firing event per reservation, its message kept current. */
export const FIRE_RESERVATION_ALERT = statement("reservations.fire-alert", {
  params: ["text", "text", "text", "uuid", "text"],
  columns: {},
  text: `
    INSERT INTO alert_events (rule_type, dedupe_key, subject_type, subject_id, subject_label, tenant_id, severity, message, details)
    VALUES ('reservation_degraded', $1, 'reservation', $2, $3, $4::uuid, 'warning', $5, '{}'::jsonb)
    ON CONFLICT (dedupe_key) WHERE status = 'firing' DO UPDATE SET last_seen_at = now(), message = EXCLUDED.message`,
});

/** Resolves the firing alert $2, its message ending with $1. */
export const RESOLVE_RESERVATION_ALERT = statement("reservations.resolve-alert", {
  params: ["text", "text"],
  columns: {},
  text: `
    UPDATE alert_events SET status = 'resolved', resolved_at = now(), message = message || $1
     WHERE dedupe_key = $2 AND status = 'firing'`,
});

/** Jobs that named the reservation $1 are cancelled ($2: their error, $3: why, $4: the actor), with their events. */
export const CANCEL_NAMED_JOBS = statement("reservations.cancel-named-jobs", {
  params: ["uuid", "text", "text", "text"],
  columns: { id: "text" },
  text: `
    WITH named AS (
      SELECT id, status FROM jobs WHERE reservation_id = $1::uuid AND status IN ('queued', 'blocked', 'running') FOR UPDATE
    ), done AS (
      UPDATE jobs j SET status = 'cancelled', finished_at = now(), updated_at = now(), block_reason = NULL, pending_reason = NULL,
             error = $2
        FROM named WHERE j.id = named.id RETURNING j.id, named.status AS from_status
    ), events AS (
      INSERT INTO job_events (job_id, from_status, to_status, reason, actor) SELECT id, from_status, 'cancelled', $3, $4 FROM done
    )
    SELECT id::text FROM done`,
});

/** The GPUs of the jobs $1 are free. */
export const FREE_JOB_GPUS = statement("reservations.free-job-gpus", {
  params: ["uuid[]"],
  columns: {},
  text: `UPDATE gpus SET allocated_job_id = NULL, updated_at = now() WHERE allocated_job_id = ANY($1::uuid[])`,
});

/** Jobs running inside the reservation $1 (placed on its nodes), locked. */
export const LOCK_JOBS_INSIDE = statement("reservations.lock-jobs-inside", {
  params: ["uuid"],
  columns: { id: "text" },
  text: `
    SELECT j.id::text FROM jobs j JOIN job_placements p ON p.job_id = j.id AND p.attempt = j.attempts
     WHERE j.status = 'running' AND p.reservation_id = $1::uuid FOR UPDATE OF j`,
});

/** The reservation $1's live endpoint replicas, locked. */
export const LOCK_REPLICAS_INSIDE = statement("reservations.lock-replicas-inside", {
  params: ["uuid"],
  columns: { id: "text" },
  text: `
    SELECT id::text FROM endpoint_replicas WHERE reservation_id = $1::uuid AND status <> 'stopped' FOR UPDATE`,
});

/** Jobs running on the reservation $1's nodes now that are not its own, locked. */
export const LOCK_FOREIGN_JOBS = statement("reservations.lock-foreign-jobs", {
  params: ["uuid"],
  columns: { id: "text" },
  text: `
    SELECT j.id::text FROM jobs j LEFT JOIN job_placements p ON p.job_id = j.id AND p.attempt = j.attempts
     WHERE j.status = 'running' AND p.reservation_id IS DISTINCT FROM $1::uuid
       AND j.id IN (SELECT g.allocated_job_id FROM reservation_nodes rn JOIN gpus g ON g.node_id = rn.node_id
                     WHERE rn.reservation_id = $1::uuid AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now())
     FOR UPDATE OF j`,
});

/** Live endpoint replicas on the reservation $1's nodes now that are not its own, locked. */
export const LOCK_FOREIGN_REPLICAS = statement("reservations.lock-foreign-replicas", {
  params: ["uuid"],
  columns: { id: "text" },
  text: `
    SELECT r.id::text FROM endpoint_replicas r JOIN reservation_nodes rn ON rn.node_id = r.node_id
     WHERE rn.reservation_id = $1::uuid AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now()
       AND r.status <> 'stopped' AND r.reservation_id IS DISTINCT FROM $1::uuid FOR UPDATE OF r`,
});
