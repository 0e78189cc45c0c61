import "server-only";
import type pg from "pg";
import { columnSet } from "@/lib/db/column-set";
import { readNodeBookings } from "./capacity-queries";
import type { NodeBooking } from "./free-nodes";
import type { Decision } from "./placement";

// What a scheduling cycle writes (lib/scheduler/run-cycle.ts), inside its transaction. The cycle
// reads free GPUs and waiting jobs without locks; before it writes, it locks exactly the GPUs it
// chose and checks they are still free (lockChosenGpus), and every write re-checks the job is
// still waiting. Anything that changed meanwhile is a CycleConflict: the transaction rolls back and
// the next attempt reads fresh facts. The database's triggers check every allocation again. The
// statements are named: prepared once per connection, since every cycle runs the same texts.

/**
 * A GPU or a job changed under the cycle (taken, cancelled): roll back; the next attempt reads
 * fresh facts. `busyGpus`: chosen GPUs another transaction holds or took, left out of the next attempt.
 */
export class CycleConflict extends Error {
  constructor(
    what = "a waiting job",
    readonly busyGpus: readonly string[] = [],
  ) {
    super(`${what} changed during the scheduling cycle; it will run again`);
  }
}

export type Placed = Extract<Decision, { outcome: "placed" }>;
type Waiting = Exclude<Decision, { outcome: "placed" }>;

/**
 * Locks the GPUs the cycle chose (jobs' and pods'), FOR UPDATE SKIP LOCKED, and refuses the cycle
 * when any of them is no longer free (taken by an endpoint replica meanwhile, unhealthy, its node
 * out of service) or another transaction holds it: those are left out of the next attempt, as a GPU
 * changing at this moment always was. Only the chosen GPUs are locked, not every free one, so a
 * cycle that places a few jobs leaves the rest of the fleet to other allocators.
 *
 * Then the chosen nodes' bookings are read again and must be the ones the placement saw: a
 * reservation booked meanwhile has committed (and the cycle runs again knowing it), while one
 * booked from now on waits for these GPU locks (its check locks its nodes' GPUs) and then sees
 * this cycle's work on them.
 */
export async function lockChosenGpus(
  c: pg.ClientBase,
  gpuIds: string[],
  nodeIds: string[],
  bookings: ReadonlyMap<string, NodeBooking>,
): Promise<void> {
  if (gpuIds.length === 0) return;
  const { rows } = await c.query<{ id: string }>({
    name: "scheduler.lock-chosen-gpus",
    text: `SELECT g.id FROM gpus g JOIN nodes n ON n.id = g.node_id
      WHERE g.id = ANY($1::uuid[]) AND g.status = 'available' AND n.status = 'available'
        AND g.allocated_job_id IS NULL AND g.allocated_replica_id IS NULL AND g.allocated_pod_id IS NULL AND g.foreign_holder IS NULL
      FOR UPDATE OF g SKIP LOCKED`,
    values: [gpuIds],
  });
  if (rows.length !== gpuIds.length) {
    const locked = new Set(rows.map((r) => r.id));
    throw new CycleConflict(
      "a free GPU",
      gpuIds.filter((g) => !locked.has(g)),
    );
  }
  const now = await readNodeBookings(c, [...new Set(nodeIds)]);
  const same = (a: NodeBooking | undefined, b: NodeBooking | undefined) =>
    a?.reservationId === b?.reservationId && a?.bookedFrom === b?.bookedFrom;
  for (const n of new Set([...nodeIds, ...now.keys()]))
    if (!same(now.get(n), bookings.get(n))) throw new CycleConflict("a node's reservations");
}

// one element per placed job, one per GPU it takes, one per waiting job and one per move
const STARTS = columnSet({
  id: "uuid[]",
  from_status: "text[]",
  nodes: "int[]",
  reservation_id: "uuid[]",
  gpu_ids: "text[]",
  node_ids: "text[]",
});
const ALLOCATIONS = columnSet({ gpu_id: "uuid[]", job_id: "uuid[]" });
const REASONS = columnSet({ id: "uuid[]", reason: "text[]" });
const MOVES = columnSet({ id: "uuid[]", status: "text[]", from_status: "text[]", reason: "text[]" });

/**
 * The placed jobs start in one statement: their status, attempt and fence, their GPUs (already
 * locked), their placements (what the node's reports, logs and telemetry are keyed by, with the
 * reservation they run in, if any) and their events. A run starts when its GPUs are taken
 * (clock_timestamp), not when the transaction began. Only jobs still waiting start, and only their
 * GPUs are allocated, so a job cancelled meanwhile is a conflict, never a half-written placement.
 * `position` orders GPUs as the database lists a placement's (node, then index).
 */
export async function startPlacedJobs(
  c: pg.ClientBase,
  placed: Placed[],
  before: ReadonlyMap<string, "queued" | "blocked">,
  position: ReadonlyMap<string, number>,
  nodeOf: ReadonlyMap<string, string>,
): Promise<void> {
  if (placed.length === 0) return;
  const allocations = ALLOCATIONS.empty();
  const gpuLists: string[] = [];
  const nodeLists: string[] = [];
  for (const d of placed) {
    const gpus = [...d.gpuIds].sort((a, b) => position.get(a)! - position.get(b)!);
    for (const g of gpus) {
      allocations.gpu_id.push(g);
      allocations.job_id.push(d.jobId);
    }
    gpuLists.push(`{${gpus.join(",")}}`);
    nodeLists.push(`{${[...new Set(gpus.map((g) => nodeOf.get(g)!))].join(",")}}`);
  }
  const starts = STARTS.bindRows(placed, {
    id: (d) => d.jobId,
    from_status: (d) => before.get(d.jobId)!,
    nodes: (d) => d.nodeIds.length,
    reservation_id: (d) => d.reservationId ?? null,
    gpu_ids: (_, i) => gpuLists[i]!,
    node_ids: (_, i) => nodeLists[i]!,
  });
  const alloc = ALLOCATIONS.bind(allocations, starts.values.length + 1);
  const { rows } = await c.query<{ started: number; allocated: number }>({
    name: "scheduler.start-placed-jobs",
    text: `WITH starts AS (SELECT * FROM ${starts.sql}),
     started AS (
       UPDATE jobs j SET status = 'running', started_at = clock_timestamp(), attempts = j.attempts + 1, fence = gen_random_uuid(),
              block_reason = NULL, pending_reason = NULL, not_before = NULL, updated_at = now()
         FROM starts x
        WHERE j.id = x.id AND (j.status = 'queued' OR (j.status = 'blocked' AND j.block_reason = 'quota'))
       RETURNING j.id, j.attempts, j.fence, j.started_at
     ), allocated AS (
       UPDATE gpus g SET allocated_job_id = x.job_id, updated_at = now()
         FROM ${alloc.sql} JOIN started s ON s.id = x.job_id
        WHERE g.id = x.gpu_id
       RETURNING g.id
     ), placements AS (
       INSERT INTO job_placements (job_id, attempt, fence, gpu_ids, node_ids, started_at, reservation_id)
       SELECT s.id, s.attempts, s.fence, x.gpu_ids::uuid[], x.node_ids::uuid[], s.started_at, x.reservation_id
         FROM started s JOIN starts x ON x.id = s.id
     ), events AS (
       INSERT INTO job_events (job_id, from_status, to_status, reason, actor)
       SELECT x.id, x.from_status, 'running',
              'placed on ' || x.nodes || CASE WHEN x.nodes = 1 THEN ' node' ELSE ' nodes' END
                || CASE WHEN x.reservation_id IS NULL THEN '' ELSE ' of reservation ' || left(x.reservation_id::text, 8) END, 'scheduler'
         FROM starts x JOIN started s ON s.id = x.id
     )
     SELECT (SELECT count(*)::int FROM started) AS started, (SELECT count(*)::int FROM allocated) AS allocated`,
    values: [...starts.values, ...alloc.values],
  });
  if (rows[0]!.started !== placed.length || rows[0]!.allocated !== allocations.gpu_id.length) throw new CycleConflict();
}

/**
 * Jobs left waiting: the reason a tenant reads (only where it changed; the status column untouched,
 * so no status trigger fires for jobs that stay put), and moves between queued and blocked where
 * the cause changed (with their events).
 */
export async function recordWaiting(
  c: pg.ClientBase,
  waiting: Waiting[],
  before: ReadonlyMap<string, "queued" | "blocked">,
  reasonsBefore: ReadonlyMap<string, string | null>,
): Promise<void> {
  if (waiting.length === 0) return;
  const target = (d: Waiting) => (d.outcome === "blocked_quota" ? "blocked" : "queued");
  const moving = waiting.filter((d) => before.get(d.jobId) !== target(d));
  // a backlog whose reasons stay the same from cycle to cycle costs no write at all
  const staying = waiting.filter((d) => before.get(d.jobId) === target(d) && reasonsBefore.get(d.jobId) !== d.reason);
  if (staying.length) {
    const reasons = REASONS.bindRows(staying, { id: (d) => d.jobId, reason: (d) => d.reason });
    await c.query({
      name: "scheduler.record-reasons",
      text: `UPDATE jobs j SET pending_reason = x.reason, updated_at = now()
         FROM ${reasons.sql}
        WHERE j.id = x.id AND j.status IN ('queued', 'blocked') AND j.pending_reason IS DISTINCT FROM x.reason`,
      values: reasons.values,
    });
  }
  if (moving.length === 0) return;
  const moves = MOVES.bindRows(moving, {
    id: (d) => d.jobId,
    status: (d) => target(d),
    from_status: (d) => before.get(d.jobId)!,
    reason: (d) => d.reason,
  });
  const { rows } = await c.query<{ moved: number }>({
    name: "scheduler.record-moves",
    text: `WITH moved AS (
       UPDATE jobs j SET status = x.status, block_reason = CASE WHEN x.status = 'blocked' THEN 'quota' END, pending_reason = x.reason, updated_at = now()
         FROM ${moves.sql}
        WHERE j.id = x.id AND j.status = x.from_status AND (j.status <> 'blocked' OR j.block_reason = 'quota')
       RETURNING j.id, x.from_status, x.status AS to_status
     ), events AS (
       INSERT INTO job_events (job_id, from_status, to_status, reason, actor)
       SELECT id, from_status, to_status, CASE WHEN to_status = 'blocked' THEN 'over quota' ELSE 'quota freed' END, 'scheduler' FROM moved
     )
     SELECT count(*)::int AS moved FROM moved`,
    values: moves.values,
  });
  if (rows[0]!.moved !== moving.length) throw new CycleConflict();
}
