import { statement } from "@/lib/db/statement";

// Reservations' raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts. The capacity facts read the public_api views only (the
// public listener's role can read nothing else).

/** Nodes of the public view, of the GPU type $1 and the cluster $2 (NULL: any). */
export const CAPACITY_NODES = statement("reservations.capacity-nodes", {
  params: ["text?", "uuid?"],
  columns: { node_id: "uuid", cluster_id: "uuid", cluster_name: "text", region: "text?", pod: "text?", rack: "text?", status: "text", gpu_type: "text", gpus: "int4", healthy: "int4" },
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
    node_id: "uuid", hostname: "text", cluster: "text", pod: "text?", rack: "text?", status: "text", gpus: "int4",
    reserved_by: "text?", reservation_id: "text?", used_by: "text[]?", booked_from: "timestamptz?",
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
