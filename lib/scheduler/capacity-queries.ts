import "server-only";
import type pg from "pg";
import type { FreeGpu, NodeBooking } from "./free-nodes";

// What the scheduler's cycle and the endpoint reconciler both read before placing work: the free
// healthy GPUs, the reservations that hold or book their nodes, and each tenant's quota in
// use. One copy, so a new kind of allocation or holding changes both placers at once. The hot ones
// are named, so each connection parses them once (and plans once where no value changes the plan):
// a cycle woken by a submit runs them every time.

// A node rented from a provider (lib/burst) runs only the job it was rented for: its GPUs carry that
// job (dedicated_to; '' while it is idle, so it takes nothing), and replicas never go there.
const DEDICATED_TO = `(SELECT COALESCE(pi.job_id::text, '') FROM provider_instances pi WHERE pi.node_id = n.id) AS dedicated_to`;

/** A GPU held by nothing and healthy (alias g): free where its node is available too. */
const GPU_UNHELD = `g.status = 'available' AND g.allocated_job_id IS NULL AND g.allocated_replica_id IS NULL AND g.allocated_pod_id IS NULL
          AND g.foreign_holder IS NULL`;

/** A GPU that can take work now: healthy, held by nothing, on an available node (aliases g, n, c). */
const FREE_GPUS_FROM = `FROM gpus g JOIN nodes n ON n.id = g.node_id JOIN clusters c ON c.id = n.cluster_id
        WHERE ${GPU_UNHELD} AND n.status = 'available'`;

// endpoint replicas are services: never on a Slurm cluster's nodes, whose bridge runs batch jobs only,
// nor on nodes rented from a provider for one job
const FREE_CONTAINER_GPUS_SQL = `SELECT g.id, g.node_id, n.cluster_id, n.containers, c.kind = 'slurm' AS batch_only, g.gpu_type, n.pod, n.rack, ${DEDICATED_TO}
         ${FREE_GPUS_FROM}
          AND n.containers AND c.kind <> 'slurm' AND g.gpu_type = ANY($1::text[]) AND NOT EXISTS (SELECT 1 FROM provider_instances pi WHERE pi.node_id = n.id)
        ORDER BY g.node_id, g.index FOR UPDATE OF g SKIP LOCKED`;

// one row per node and type with its free GPUs' ids in index order: a cycle woken by a submit read
// 960 rows of nine columns for 120 nodes, and turning rows into objects was most of its cost. The
// unheld GPUs are grouped first and only their nodes joined: joined first, every available node of
// the fleet was read and hashed on every cycle, though most had nothing free.
const FREE_GPUS_BY_NODE_SQL = `SELECT n.id AS node_id, n.cluster_id, n.containers, c.kind = 'slurm' AS batch_only, f.gpu_type, n.pod, n.rack, ${DEDICATED_TO}, f.ids
         FROM (SELECT g.node_id, g.gpu_type, string_agg(g.id::text, ',' ORDER BY g.index) AS ids, min(g.index) AS first_index
                 FROM gpus g WHERE ${GPU_UNHELD} GROUP BY g.node_id, g.gpu_type) f
         JOIN nodes n ON n.id = f.node_id JOIN clusters c ON c.id = n.cluster_id
        WHERE n.status = 'available'
        ORDER BY n.id, f.first_index`;

/**
 * The free GPUs, in node and index order, without locking them: the scheduler's cycle locks only
 * the ones it chooses, when it has chosen (lib/scheduler/write-decisions.ts), and checks they are
 * still free then.
 */
export async function readFreeGpus(c: pg.ClientBase): Promise<FreeGpu[]> {
  const { rows } = await c.query<Omit<FreeGpu, "id"> & { ids: string }>({
    name: "scheduler.free-gpus-by-node",
    text: FREE_GPUS_BY_NODE_SQL,
  });
  const gpus: FreeGpu[] = [];
  for (const { ids, ...node } of rows) for (const id of ids.split(",")) gpus.push({ id, ...node });
  return gpus;
}

/**
 * Locks the free GPUs of those types on container nodes (the only ones a replica can use), in node
 * and index order, FOR UPDATE SKIP LOCKED: a GPU changing at this moment is left for the next pass,
 * and the others stay free for a concurrent cycle.
 */
export async function lockFreeGpus(c: pg.ClientBase, containersOf: { gpuTypes: string[] }): Promise<FreeGpu[]> {
  return (await c.query<FreeGpu>(FREE_CONTAINER_GPUS_SQL, [containersOf.gpuTypes])).rows;
}

/**
 * The bookings of every node a live reservation holds now or later (at most one holds it at a
 * time); with `nodeIds`, of those nodes only.
 */
export async function readNodeBookings(c: pg.ClientBase, nodeIds?: readonly string[]): Promise<Map<string, NodeBooking>> {
  const { rows } = await c.query<{ node_id: string; reservation_id: string | null; booked_from_ms: string | null }>({
    name: "scheduler.node-bookings",
    text: `SELECT node_id, (array_agg(reservation_id) FILTER (WHERE starts_at <= now()))[1]::text AS reservation_id,
            (extract(epoch FROM min(starts_at) FILTER (WHERE starts_at > now())) * 1000)::bigint AS booked_from_ms
       FROM reservation_nodes WHERE live AND ends_at > now() AND ($1::uuid[] IS NULL OR node_id = ANY($1::uuid[])) GROUP BY node_id`,
    values: [nodeIds ?? null],
  });
  const bookings = new Map<string, NodeBooking>();
  for (const b of rows) {
    bookings.set(b.node_id, {
      ...(b.reservation_id ? { reservationId: b.reservation_id } : {}),
      ...(b.booked_from_ms ? { bookedFrom: Number(b.booked_from_ms) } : {}),
    });
  }
  return bookings;
}

/** Each tenant's GPU quota and the GPUs it uses against it now (reserved nodes count as their holdings). */
export async function readTenantQuotas(c: pg.ClientBase, tenantIds: string[]): Promise<Map<string, { quota: number; inUse: number }>> {
  const { rows } = await c.query<{ id: string; gpu_quota: number; in_use: number }>({
    name: "scheduler.tenant-quotas",
    text: `SELECT t.id, t.gpu_quota, COALESCE(u.in_use, 0)::int AS in_use FROM tenants t
       LEFT JOIN tenant_gpus_in_use($1::uuid[]) u ON u.tenant_id = t.id
      WHERE t.id = ANY($1::uuid[])`,
    values: [tenantIds],
  });
  return new Map(rows.map((t) => [t.id, { quota: t.gpu_quota, inUse: t.in_use }]));
}
