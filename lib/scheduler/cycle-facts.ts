import "server-only";
import type pg from "pg";
import { env } from "@/lib/env";
import { waitingPods } from "@/lib/pods/schedule-pods";
import { readFreeGpus, readNodeBookings, readTenantQuotas } from "./capacity-queries";
import type { FreeGpu, NodeBooking } from "./free-nodes";
import type { ActiveReservation, Capacity, QueuedJob, RunningWork, TenantUsage } from "./placement";

// What one scheduling cycle decides from (lib/scheduler/run-cycle.ts), read in its transaction
// without locks: waiting jobs and pods, free GPUs, reservations, quotas, running work, capacity.
//
// A cycle woken by an event (a submit, GPUs freed) reads only what it could place now: the work of
// GPU types that have a free GPU somewhere. Work of a type with none free cannot start whatever
// the cycle decides, and nothing it could decide about such work changes what the other types get
// (it takes no GPUs and no quota), so reading it on every event was the cost of a backlog: 10,000
// jobs waiting for full H100 nodes made every submit for a free L4 GPU wait for a cycle that read
// them all. Their reasons and their moves between queued and blocked (quota freed or exceeded) are
// kept current by the cycle of the "waiting" scope, every 30 s, which reads exactly that work
// and places nothing: it reads under a lock of its own, so a large backlog of such work never holds
// up the cycles that place, and writes under theirs (lib/scheduler/run-cycle.ts).

const MAX_QUEUE = 50_000;
/** The node (alias n) is held by a reservation in force now: its GPUs are not on-demand capacity. */
const RESERVED_NOW = `EXISTS (SELECT 1 FROM reservation_nodes rn WHERE rn.node_id = n.id AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now())`;

/**
 * "all": every waiting job and pod. "placeable": the work of GPU types with a free GPU. "waiting":
 * the rest, the work of types with none free, for its reasons and quota moves (it places nothing).
 */
export type CycleScope = "all" | "placeable" | "waiting";

export interface CycleFacts {
  jobs: QueuedJob[];
  pods: QueuedJob[];
  free: FreeGpu[];
  bookings: Map<string, NodeBooking>;
  reservations: ActiveReservation[];
  tenants: Map<string, TenantUsage>;
  /** the GPU types the scope reads (null: every type), for readCapacityFacts */
  types: string[] | null;
  /** each waiting job's reason as read: the cycle writes only the reasons that changed */
  reasonsBefore: ReadonlyMap<string, string | null>;
}

/** What a head that cannot start now needs to reserve capacity, and what a job too big for the usable fleet is told. */
export interface CapacityFacts {
  running: RunningWork[];
  capacity: Capacity[];
}

interface QueueRow {
  id: string;
  tenant_id: string;
  gpu_count: number;
  gpu_type: string;
  cluster_id: string | null;
  needs_containers: boolean;
  priority: number;
  submitted_ms: string;
  duration_s: number | null;
  status: "queued" | "blocked";
  reservation_id: string | null;
  pending_reason: string | null;
}

const QUEUE_COLUMNS = `j.id, j.tenant_id, j.gpu_count, j.gpu_type, j.cluster_id, (j.image IS NOT NULL OR j.command IS NOT NULL) AS needs_containers, j.reservation_id, j.pending_reason,
              GREATEST(j.priority, t.max_priority) AS priority, (extract(epoch FROM j.submitted_at) * 1000)::bigint AS submitted_ms, j.duration_s, j.status`;
const SCHEDULABLE = `(j.status = 'queued' OR (j.status = 'blocked' AND j.block_reason = 'quota')) AND (j.not_before IS NULL OR j.not_before <= now())`;

// The fair window (issue 15): each active tenant contributes at most SCHEDULER_TENANT_WINDOW of its
// waiting jobs, read through jobs_schedulable_idx, so one tenant's backlog (50,000 jobs blocked by
// quota, say) can neither fill the window nor make every cycle read all of it. Suspended tenants
// are not read at all (the database also refuses to start their work), and a job never ranks above
// the best priority its tenant may use now (tenants.max_priority).
const ALL_WAITING = `SELECT ${QUEUE_COLUMNS}
         FROM tenants t CROSS JOIN LATERAL (
           SELECT * FROM jobs j WHERE j.tenant_id = t.id AND ${SCHEDULABLE} ORDER BY j.priority, j.submitted_at LIMIT $2) j
        WHERE t.status = 'active'
        ORDER BY priority, j.submitted_at LIMIT $1`;
// …and of the given GPU types only, the same window per tenant, through jobs_schedulable_type_idx.
// The types are a literal array, not a join with unnest: each cycle's plan then sees which types it
// asks for, and a type few jobs wait for is read by index (0.4 ms for 51 tenants) where the join's
// plan, estimating every type alike, read each tenant's whole window and filtered it (14 ms).
const waitingWhereType = (typeCondition: string) => `SELECT ${QUEUE_COLUMNS}
         FROM tenants t CROSS JOIN LATERAL (
           SELECT * FROM jobs j WHERE j.tenant_id = t.id AND ${typeCondition} AND ${SCHEDULABLE}
            ORDER BY j.priority, j.submitted_at LIMIT $2) j
        WHERE t.status = 'active'
        ORDER BY priority, j.submitted_at LIMIT $1`;
const WAITING_OF_TYPES = waitingWhereType("j.gpu_type = ANY($3::text[])");
// …and of every other type (the "waiting" scope), the same window per tenant
const WAITING_OF_OTHER_TYPES = waitingWhereType("j.gpu_type <> ALL($3::text[])");

const toJob = (j: QueueRow): QueuedJob => ({
  id: j.id,
  tenantId: j.tenant_id,
  gpuCount: j.gpu_count,
  gpuType: j.gpu_type,
  clusterId: j.cluster_id,
  needsContainers: j.needs_containers,
  priority: j.priority,
  submittedAt: Number(j.submitted_ms),
  durationS: j.duration_s,
  status: j.status,
  reservationId: j.reservation_id,
});

/**
 * The cycle's facts, or null when there is nothing to decide (no work waiting; with the
 * "placeable" scope, no free GPU at all). `busy`: GPUs left out (another transaction held them).
 */
export async function readCycleFacts(c: pg.PoolClient, scope: CycleScope, busy: ReadonlySet<string>): Promise<CycleFacts | null> {
  let free: FreeGpu[] | undefined;
  let types: string[] | null = null;
  let queue: { rows: QueueRow[] };
  let pods: QueuedJob[];
  const window = env().SCHEDULER_TENANT_WINDOW;
  if (scope === "all") {
    queue = await c.query<QueueRow>(ALL_WAITING, [MAX_QUEUE, window]);
    // pods wait in the same queue: one node each, containers only (lib/pods/schedule-pods.ts)
    pods = await waitingPods(c);
  } else {
    free = (await readFreeGpus(c)).filter((g) => !busy.has(g.id));
    const freeTypes = [...new Set(free.map((g) => g.gpu_type))];
    if (scope === "placeable") {
      if (freeTypes.length === 0) return null;
      types = freeTypes;
      queue = await c.query<QueueRow>(WAITING_OF_TYPES, [MAX_QUEUE, window, types]);
      pods = (await waitingPods(c)).filter((p) => freeTypes.includes(p.gpuType));
    } else {
      // the work no free GPU can take: it is read with the types it asks for, and nothing is free for it
      queue = await c.query<QueueRow>(WAITING_OF_OTHER_TYPES, [MAX_QUEUE, window, freeTypes]);
      pods = (await waitingPods(c)).filter((p) => !freeTypes.includes(p.gpuType));
      types = [...new Set([...queue.rows.map((j) => j.gpu_type), ...pods.map((p) => p.gpuType)])];
      free = [];
    }
  }
  if (queue.rows.length === 0 && pods.length === 0) return null;
  free ??= (await readFreeGpus(c)).filter((g) => !busy.has(g.id));
  // Whole-node reservations: the nodes each one holds now (only its tenant's work goes there), the
  // next booking of every node (work placed there now must end before it), and the live
  // reservations of the queue's tenants: work that names one waits for it, and the tenant's other
  // work runs in it first when it holds a free GPU. With neither, they change no decision
  // (placement.ts, placeInReservation) and are not read.
  const bookings = await readNodeBookings(c);
  const reservedFree = free.some((g) => bookings.get(g.node_id)?.reservationId);
  const live =
    reservedFree || queue.rows.some((j) => j.reservation_id)
      ? await c.query<{ id: string; tenant_id: string; starts_ms: string; ends_ms: string }>(
          `SELECT r.id, r.tenant_id, (extract(epoch FROM r.starts_at) * 1000)::bigint AS starts_ms, (extract(epoch FROM r.ends_at) * 1000)::bigint AS ends_ms
             FROM reservations r WHERE r.tenant_id = ANY($1::uuid[]) AND r.status IN ('confirmed', 'active') AND r.ends_at > now()`,
          [[...new Set(queue.rows.map((j) => j.tenant_id))]],
        )
      : { rows: [] };
  const tenants = await readTenantQuotas(c, [...new Set([...queue.rows.map((j) => j.tenant_id), ...pods.map((p) => p.tenantId)])]);
  return {
    jobs: queue.rows.map(toJob),
    pods,
    free,
    bookings,
    reservations: live.rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, startsAt: Number(r.starts_ms), endsAt: Number(r.ends_ms) })),
    tenants,
    types,
    reasonsBefore: new Map(queue.rows.map((j) => [j.id, j.pending_reason])),
  };
}

/**
 * Running work and usable capacity of the scope's GPU types: read only when some work cannot start
 * now (lib/scheduler/run-cycle.ts), since a cycle that starts everything it read consults neither.
 */
export async function readCapacityFacts(c: pg.ClientBase, types: string[] | null): Promise<CapacityFacts> {
  // Running work by cluster, counting only the GPUs that can take work again when it ends
  // (healthy, on an available node): a draining or quarantined node gives nothing back to a head.
  const running = await c.query<{
    gpu_type: string;
    cluster_id: string;
    containers: boolean;
    batch_only: boolean;
    gpu_count: number;
    ends_ms: string | null;
  }>(
    `SELECT j.gpu_type, n.cluster_id, n.containers, c.kind = 'slurm' AS batch_only, count(*)::int AS gpu_count,
              (extract(epoch FROM j.started_at + make_interval(secs => j.duration_s)) * 1000)::bigint AS ends_ms
         FROM jobs j JOIN gpus g ON g.allocated_job_id = j.id JOIN nodes n ON n.id = g.node_id JOIN clusters c ON c.id = n.cluster_id
        WHERE j.status = 'running' AND g.status = 'available' AND n.status = 'available' AND NOT ${RESERVED_NOW}
          AND ($1::text[] IS NULL OR j.gpu_type = ANY($1::text[]))
        GROUP BY j.id, n.cluster_id, n.containers, c.kind`,
    [types],
  );
  const capacity = await c.query<{ gpu_type: string; cluster_id: string; containers: boolean; batch_only: boolean; gpus: number }>(
    `SELECT g.gpu_type, n.cluster_id, n.containers, c.kind = 'slurm' AS batch_only, count(*)::int AS gpus
         FROM gpus g JOIN nodes n ON n.id = g.node_id JOIN clusters c ON c.id = n.cluster_id
        WHERE g.status = 'available' AND n.status = 'available' AND NOT ${RESERVED_NOW} AND ($1::text[] IS NULL OR g.gpu_type = ANY($1::text[]))
        GROUP BY g.gpu_type, n.cluster_id, n.containers, c.kind`,
    [types],
  );
  return {
    running: running.rows.map((r) => ({
      gpuType: r.gpu_type,
      clusterId: r.cluster_id,
      containers: r.containers,
      ...(r.batch_only ? { batchOnly: true } : {}),
      gpuCount: r.gpu_count,
      endsAt: r.ends_ms === null ? null : Number(r.ends_ms),
    })),
    capacity: capacity.rows.map((r) => ({
      gpuType: r.gpu_type,
      clusterId: r.cluster_id,
      containers: r.containers,
      ...(r.batch_only ? { batchOnly: true } : {}),
      gpus: r.gpus,
    })),
  };
}
