import { statement } from "@/lib/db/statement";

// Reservations' raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts. The capacity facts read the public_api views only (the
// public listener's role can read nothing else).

/** Nodes of the public view, of the GPU type $1 and the cluster $2 (NULL: any). */
export const CAPACITY_NODES = statement("reservations.capacity-nodes", {
  params: ["text?", "uuid?"],
  columns: {
    node_id: "uuid",
    cluster_id: "uuid",
    cluster_name: "text",
    region: "text?",
    pod: "text?",
    rack: "text?",
    status: "text",
    gpu_type: "text",
    gpus: "int4",
    healthy: "int4",
  },
  text: `SELECT node_id, cluster_id, cluster_name, region, pod, rack, status, gpu_type, gpus, healthy FROM public_api.nodes
      WHERE ($1::text IS NULL OR gpu_type = $1) AND ($2::uuid IS NULL OR cluster_id = $2)`,
});

/** The bookings of the nodes $1, as epoch milliseconds (text: bigint). */
export const CAPACITY_BOOKINGS = statement("reservations.capacity-bookings", {
  params: ["uuid[]"],
  columns: { node_id: "uuid", starts_ms: "text", ends_ms: "text" },
  text: `SELECT node_id, (extract(epoch FROM starts_at) * 1000)::bigint::text AS starts_ms, (extract(epoch FROM ends_at) * 1000)::bigint::text AS ends_ms
       FROM public_api.node_bookings WHERE node_id = ANY($1::uuid[])`,
});

/** The work on the nodes $1: GPUs it holds and until when it is known to (epoch milliseconds; NULL: open-ended). */
export const CAPACITY_WORK = statement("reservations.capacity-work", {
  params: ["uuid[]"],
  columns: { node_id: "uuid", until_ms: "text?", gpus: "int4" },
  text: `SELECT node_id, (extract(epoch FROM busy_until) * 1000)::bigint::text AS until_ms, gpus FROM public_api.node_work WHERE node_id = ANY($1::uuid[])`,
});

/** Every node with the tenant holding or using it now: the operators' fleet floor by tenant. */
export const FLEET_BY_TENANT = statement("reservations.fleet-by-tenant", {
  params: [],
  columns: {
    node_id: "uuid",
    hostname: "text",
    cluster: "text",
    pod: "text?",
    rack: "text?",
    status: "text",
    gpus: "int4",
    reserved_by: "text?",
    reservation_id: "text?",
    used_by: "text[]?",
    booked_from: "timestamptz?",
  },
  text: `SELECT n.id AS node_id, n.hostname, c.name AS cluster, n.pod, n.rack, n.status,
            (SELECT count(*)::int FROM gpus g WHERE g.node_id = n.id AND g.missing_since IS NULL) AS gpus,
            h.tenant_name AS reserved_by, h.reservation_id,
            (SELECT array_agg(DISTINCT t.name) FROM gpus g
               LEFT JOIN jobs j ON j.id = g.allocated_job_id LEFT JOIN endpoint_replicas r ON r.id = g.allocated_replica_id
               JOIN tenants t ON t.id = COALESCE(j.tenant_id, r.tenant_id)
              WHERE g.node_id = n.id) AS used_by,
            (SELECT min(rn.starts_at) FROM reservation_nodes rn WHERE rn.node_id = n.id AND rn.live AND rn.starts_at > now()) AS booked_from
       FROM nodes n JOIN clusters c ON c.id = n.cluster_id
       LEFT JOIN LATERAL (
         SELECT t.name AS tenant_name, rn.reservation_id::text FROM reservation_nodes rn JOIN tenants t ON t.id = rn.tenant_id
          WHERE rn.node_id = n.id AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now() LIMIT 1
       ) h ON true
      ORDER BY c.name, n.pod NULLS LAST, n.rack NULLS LAST, n.hostname`,
});

/** Work running inside the reservation $1 now, or waiting for it. */
export const WORK_IN_RESERVATION = statement("reservations.work-in-reservation", {
  params: ["uuid"],
  columns: { id: "text", name: "text", status: "text", gpu_count: "int4", named: "bool" },
  text: `SELECT j.id::text, j.name, j.status, j.gpu_count, j.reservation_id IS NOT NULL AS named FROM jobs j
      WHERE (j.reservation_id = $1 AND j.status IN ('queued', 'blocked', 'running'))
         OR (j.status = 'running' AND EXISTS (SELECT 1 FROM job_placements p WHERE p.job_id = j.id AND p.attempt = j.attempts AND p.reservation_id = $1))
      ORDER BY j.submitted_at DESC LIMIT 200`,
});

/** One event of a reservation's history ($6: details as JSON). */
export const RECORD_RESERVATION_EVENT = statement("reservations.record-event", {
  params: ["uuid", "text", "text", "text", "uuid?", "jsonb"],
  columns: {},
  text: `INSERT INTO reservation_events (reservation_id, kind, message, actor, node_id, details) VALUES ($1, $2, $3, $4, $5, $6)`,
});

/** A reservation's row as the booking use cases lock it. */
export const LOCKED_RESERVATION = {
  id: "text",
  tenant_id: "text",
  status: "text",
  starts_at: "timestamptz",
  ends_at: "timestamptz",
  gpu_type: "text",
  node_count: "int4",
  degraded_at: "timestamptz?",
} as const;

/** Locks the reservation $1 if the tenant $2 (NULL: an operator) may see it. */
export const LOCK_RESERVATION = statement("reservations.lock", {
  params: ["uuid", "uuid?"],
  columns: LOCKED_RESERVATION,
  text: `
    SELECT id::text, tenant_id::text, status, starts_at, ends_at, gpu_type, node_count, degraded_at FROM reservations
     WHERE id = $1::uuid AND ($2::uuid IS NULL OR tenant_id = $2::uuid) FOR UPDATE`,
});

/** The transaction's time: the decisions of one transaction use one instant. */
export const TRANSACTION_NOW = statement("reservations.transaction-now", {
  params: [],
  columns: { now: "timestamptz" },
  text: `SELECT now() AS now`,
});

/** A cancellation before the start: the reservation $1's holdings are dropped (nothing was held). */
export const CANCEL_HOLDINGS = statement("reservations.cancel-holdings", {
  params: ["uuid"],
  columns: {},
  text: `UPDATE reservation_nodes SET live = false, closed_at = now(), close_reason = 'cancelled' WHERE reservation_id = $1::uuid AND closed_at IS NULL`,
});

/** The reservation $2 cancelled ($1: why). */
export const CANCEL_RESERVATION = statement("reservations.cancel", {
  params: ["text", "uuid"],
  columns: {},
  text: `
        UPDATE reservations SET status = 'cancelled', ended_at = now(), end_reason = $1, degraded_at = NULL, degraded_reason = NULL, updated_at = now()
         WHERE id = $2::uuid`,
});

/** The reservation $2's live holdings end now ($1: why); never before a holding's start (a window is at least a millisecond). */
export const RELEASE_HOLDINGS = statement("reservations.release-holdings", {
  params: ["text", "uuid"],
  columns: {},
  text: `
    UPDATE reservation_nodes SET ends_at = GREATEST(LEAST(ends_at, now()), starts_at + interval '1 millisecond'),
           closed_at = GREATEST(now(), LEAST(ends_at, now()), starts_at + interval '1 millisecond'), close_reason = $1
     WHERE reservation_id = $2::uuid AND live AND closed_at IS NULL`,
});

/** The reservation $2 released now ($1: why). */
export const RELEASE_RESERVATION = statement("reservations.release", {
  params: ["text", "uuid"],
  columns: {},
  text: `
    UPDATE reservations SET status = 'released', ends_at = GREATEST(now(), starts_at + interval '1 millisecond'), ended_at = now(), end_reason = $1,
           degraded_at = NULL, degraded_reason = NULL, updated_at = now()
     WHERE id = $2::uuid`,
});

/**
 * An extension of the reservation $4 (of the tenant $3) from $1 to $2 against the quota: the
 * tenant's quota (its row locked), the most GPUs its other reservations hold at once in the extra
 * time, and this one's.
 */
export const EXTENSION_QUOTA = statement("reservations.extension-quota", {
  params: ["timestamptz", "timestamptz", "uuid", "uuid"],
  columns: { gpu_quota: "int4", peak: "int4", mine: "int4" },
  text: `
        WITH h AS (
          SELECT GREATEST(starts_at, $1) AS s, LEAST(ends_at, $2) AS e, gpu_count FROM reservation_nodes
           WHERE tenant_id = $3::uuid AND live AND reservation_id <> $4::uuid AND starts_at < $2 AND ends_at > $1
        )
        SELECT t.gpu_quota,
               COALESCE((SELECT max((SELECT sum(h2.gpu_count) FROM h h2 WHERE h2.s <= p.s AND h2.e > p.s)) FROM h p), 0)::int AS peak,
               (SELECT COALESCE(sum(gpu_count), 0)::int FROM reservation_nodes WHERE reservation_id = $4::uuid AND live AND closed_at IS NULL AND ends_at = $1) AS mine
          FROM tenants t WHERE t.id = $3::uuid FOR UPDATE OF t`,
});

/** The reservation $2's holdings that end with it ($3) end at $1. */
export const EXTEND_HOLDINGS = statement("reservations.extend-holdings", {
  params: ["timestamptz", "uuid", "timestamptz"],
  columns: {},
  text: `
        UPDATE reservation_nodes SET ends_at = $1 WHERE reservation_id = $2::uuid AND live AND closed_at IS NULL AND ends_at = $3`,
});

export const EXTEND_RESERVATION = statement("reservations.extend", {
  params: ["timestamptz", "uuid"],
  columns: {},
  text: `UPDATE reservations SET ends_at = $1, updated_at = now() WHERE id = $2::uuid`,
});

/** Which of the reservation $1's nodes another booking holds before $2, and from when. */
export const EXTENSION_BLOCKERS = statement("reservations.extension-blockers", {
  params: ["uuid", "timestamptz"],
  columns: { hostname: "text", starts_at: "timestamptz" },
  text: `SELECT n.hostname, min(o.starts_at) AS starts_at FROM reservation_nodes mine JOIN reservations r ON r.id = mine.reservation_id
       JOIN reservation_nodes o ON o.node_id = mine.node_id AND o.live AND o.reservation_id <> r.id AND o.starts_at < $2 AND o.ends_at > r.ends_at
       JOIN nodes n ON n.id = mine.node_id
      WHERE mine.reservation_id = $1 AND mine.live AND mine.closed_at IS NULL GROUP BY n.hostname ORDER BY 2`,
});

/** The booking tenant $1, row-locked (it orders one tenant's bookings, so the quota check is exact). */
export const LOCK_BOOKING_TENANT = statement("reservations.lock-booking-tenant", {
  params: ["uuid"],
  columns: { status: "text", gpu_quota: "int4", out_of_funds: "bool" },
  text: `
    SELECT t.status, t.gpu_quota,
           (t.billing_mode = 'prepaid' AND COALESCE((SELECT sum(amount_cents) FROM ledger_entries l WHERE l.tenant_id = t.id), 0) <= 0) AS out_of_funds
      FROM tenants t WHERE t.id = $1::uuid FOR UPDATE OF t`,
});

/** A reservation: tenant, GPU type, node count, cluster (NULL: any), window, who booked it. */
export const INSERT_RESERVATION = statement("reservations.insert", {
  params: ["uuid", "text", "int4", "uuid?", "timestamptz", "timestamptz", "text", "int8?"],
  columns: { id: "text" },
  // $8: 0 for a prepaid tenant's reservation (its up-front payment is added as it is charged), else NULL
  text: `
    INSERT INTO reservations (tenant_id, gpu_type, node_count, cluster_id, starts_at, ends_at, created_by, prepaid_cents)
    VALUES ($1::uuid, $2, $3, $4::uuid, $5, $6, $7, $8) RETURNING id::text`,
});

/** The most GPUs the tenant $3's live reservations hold at one moment from $1 to $2. */
export const PEAK_RESERVED_GPUS = statement("reservations.peak-reserved-gpus", {
  params: ["timestamptz", "timestamptz", "uuid"],
  columns: { peak: "int4" },
  text: `
    WITH h AS (
      SELECT GREATEST(starts_at, $1) AS s, LEAST(ends_at, $2) AS e, gpu_count FROM reservation_nodes
       WHERE tenant_id = $3::uuid AND live AND starts_at < $2 AND ends_at > $1
    )
    SELECT COALESCE(max((SELECT sum(h2.gpu_count) FROM h h2 WHERE h2.s <= p.s AND h2.e > p.s)), 0)::int AS peak FROM h p`,
});

/** For each GPU type, the fewest and most present GPUs of it on one node. */
export const GPUS_PER_NODE_BY_TYPE = statement("reservations.gpus-per-node-by-type", {
  params: [],
  columns: { gpu_type: "text", min: "int4", max: "int4" },
  text: `SELECT gpu_type, min(n)::int AS min, max(n)::int AS max FROM (
       SELECT gpu_type, node_id, count(*) AS n FROM gpus WHERE status <> 'missing' GROUP BY gpu_type, node_id
     ) per_node GROUP BY gpu_type`,
});

/** The live reservations (confirmed, active) of the tenants $1, locked: a suspension ends them. */
export const LOCK_TENANT_LIVE_RESERVATIONS = statement("reservations.lock-tenant-live", {
  params: ["uuid[]"],
  columns: { id: "uuid", tenant_id: "uuid", status: "text", starts_at: "timestamptz", ends_at: "timestamptz" },
  text: `SELECT id, tenant_id, status, starts_at, ends_at FROM reservations
          WHERE tenant_id = ANY($1::uuid[]) AND status IN ('confirmed', 'active') ORDER BY id FOR UPDATE`,
});
