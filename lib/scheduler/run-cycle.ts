import "server-only";
import type pg from "pg";
import { columnSet } from "@/lib/db/column-set";
import { inTransaction } from "@/lib/db/transaction";
import { env } from "@/lib/env";
import { processMetrics } from "@/lib/observability/process-metrics";
import { PodConflict, waitingPods, writePodDecisions } from "@/lib/pods/schedule-pods";
import { lockFreeGpus, readNodeBookings, readTenantQuotas } from "./capacity-queries";
import { phaseClock, profiled, type CycleProfile } from "./cycle-profile";
import { groupFreeNodes } from "./free-nodes";
import { place, type ActiveReservation, type Decision, type QueuedJob } from "./placement";

const MAX_QUEUE = 50_000;
/** The node (alias n) is held by a reservation in force now: its GPUs are not on-demand capacity. */
const RESERVED_NOW = `EXISTS (SELECT 1 FROM reservation_nodes rn WHERE rn.node_id = n.id AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now())`;
const LOGGED_DECISIONS = 200;

// the rows each cycle writes, one array per column (lib/db/column-set.ts)
const GPU_JOBS = columnSet({ gpu_id: "uuid[]", job_id: "uuid[]" });
const PLACEMENTS = columnSet({ job_id: "uuid[]", reservation_id: "uuid[]" });
const PLACED_EVENTS = columnSet({ id: "uuid[]", from_status: "text[]", nodes: "int[]", reservation_id: "uuid[]" });
const REASONS = columnSet({ id: "uuid[]", reason: "text[]" });
const MOVES = columnSet({ id: "uuid[]", status: "text[]", from_status: "text[]" });
const MOVE_EVENTS = columnSet({ id: "uuid[]", from_status: "text[]", to_status: "text[]" });

/** A job changed under the cycle (cancelled, say): roll back; the next cycle reads fresh facts. */
class CycleConflict extends Error {
  constructor() {
    super("a waiting job changed during the scheduling cycle; it will run again");
  }
}

export interface CycleResult {
  id: string;
  considered: number;
  placed: number;
  blocked: number;
  duration_ms: number;
}

/**
 * One scheduling cycle in one transaction. Cycles are serialised across app instances by an
 * advisory lock; candidate GPUs are locked FOR UPDATE SKIP LOCKED so a GPU changing at this moment
 * is simply left for the next cycle. Waiting jobs are read without locks (a cycle changes only some
 * of them): every write re-checks the job is still waiting, and if one was cancelled meanwhile the
 * cycle rolls back and the next one starts from fresh facts. The database triggers re-check every
 * allocation (one job per GPU, gang sizes, quotas).
 */
export async function runSchedulerCycle(trigger: string, opts: { profile?: CycleProfile } = {}): Promise<CycleResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      const cycle = await attemptCycle(trigger, opts.profile);
      const m = processMetrics();
      m.schedulerCycle.observe(cycle.duration_ms / 1000);
      m.schedulerPlacements.inc(cycle.placed);
      m.schedulerConsidered.inc(cycle.considered);
      return cycle;
    } catch (e) {
      if (!(e instanceof CycleConflict || e instanceof PodConflict) || attempt >= 5) throw e;
    }
  }
}

async function attemptCycle(trigger: string, profile: CycleProfile | undefined): Promise<CycleResult> {
  const started = performance.now();
  const mark = phaseClock(profile);
  const result = await inTransaction(
    async (connection): Promise<Omit<CycleResult, "duration_ms">> => {
      mark("lock_ms");
      const c = profiled(connection, profile);
      // The fair window (issue 15): each active tenant contributes at most SCHEDULER_TENANT_WINDOW of
      // its waiting jobs, read through jobs_schedulable_idx, so one tenant's backlog (50,000 jobs
      // blocked by quota, say) can neither fill the window nor make every cycle read all of it.
      // Suspended tenants are not read at all (the database also refuses to start their work), and a
      // job never ranks above the best priority its tenant may use now (tenants.max_priority).
      const queue = await c.query<{
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
      }>(
        `SELECT j.id, j.tenant_id, j.gpu_count, j.gpu_type, j.cluster_id, (j.image IS NOT NULL OR j.command IS NOT NULL) AS needs_containers, j.reservation_id,
              GREATEST(j.priority, t.max_priority) AS priority, (extract(epoch FROM j.submitted_at) * 1000)::bigint AS submitted_ms, j.duration_s, j.status
         FROM tenants t CROSS JOIN LATERAL (
           SELECT * FROM jobs j
            WHERE j.tenant_id = t.id AND (j.status = 'queued' OR (j.status = 'blocked' AND j.block_reason = 'quota'))
              AND (j.not_before IS NULL OR j.not_before <= now())
            ORDER BY j.priority, j.submitted_at LIMIT $2) j
        WHERE t.status = 'active'
        ORDER BY 7, j.submitted_at LIMIT $1`,
        [MAX_QUEUE, env().SCHEDULER_TENANT_WINDOW],
      );
      // pods wait in the same queue: one node each, containers only (lib/pods/schedule-pods.ts)
      const pods = await waitingPods(c);
      if (queue.rowCount === 0 && pods.length === 0) {
        return { id: "", considered: 0, placed: 0, blocked: 0 };
      }
      const free = await lockFreeGpus(c);
      // Whole-node reservations: the nodes each one holds now (only its tenant's work goes there), the
      // next booking of every node (work placed there now must end before it), and the live
      // reservations of the queue's tenants (for work that names one).
      const bookings = await readNodeBookings(c);
      const live = await c.query<{ id: string; tenant_id: string; starts_ms: string; ends_ms: string }>(
        `SELECT r.id, r.tenant_id, (extract(epoch FROM r.starts_at) * 1000)::bigint AS starts_ms, (extract(epoch FROM r.ends_at) * 1000)::bigint AS ends_ms
         FROM reservations r WHERE r.tenant_id = ANY($1::uuid[]) AND r.status IN ('confirmed', 'active') AND r.ends_at > now()`,
        [[...new Set(queue.rows.map((j) => j.tenant_id))]],
      );
      const tenantIds = [...new Set([...queue.rows.map((j) => j.tenant_id), ...pods.map((p) => p.tenantId)])];
      const tenants = await readTenantQuotas(c, tenantIds);
      // Running work by cluster, counting only the GPUs that can take work again when it ends
      // (healthy, on an available node): a draining or quarantined node gives nothing back to a head.
      const running = await c.query<{
        gpu_type: string;
        cluster_id: string;
        containers: boolean;
        gpu_count: number;
        ends_ms: string | null;
      }>(
        `SELECT j.gpu_type, n.cluster_id, n.containers, count(*)::int AS gpu_count,
              (extract(epoch FROM j.started_at + make_interval(secs => j.duration_s)) * 1000)::bigint AS ends_ms
         FROM jobs j JOIN gpus g ON g.allocated_job_id = j.id JOIN nodes n ON n.id = g.node_id
        WHERE j.status = 'running' AND g.status = 'available' AND n.status = 'available' AND NOT ${RESERVED_NOW}
        GROUP BY j.id, n.cluster_id, n.containers`,
      );
      const capacity = await c.query<{ gpu_type: string; cluster_id: string; containers: boolean; gpus: number }>(
        `SELECT g.gpu_type, n.cluster_id, n.containers, count(*)::int AS gpus FROM gpus g JOIN nodes n ON n.id = g.node_id
        WHERE g.status = 'available' AND n.status = 'available' AND NOT ${RESERVED_NOW} GROUP BY g.gpu_type, n.cluster_id, n.containers`,
      );
      mark("read_ms");

      const reservations: ActiveReservation[] = live.rows.map((r) => ({
        id: r.id,
        tenantId: r.tenant_id,
        startsAt: Number(r.starts_ms),
        endsAt: Number(r.ends_ms),
      }));
      const jobs: QueuedJob[] = queue.rows.map((j) => ({
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
      }));
      const decisions = place({
        now: Date.now(),
        nodes: groupFreeNodes(free, bookings),
        queue: [...jobs, ...pods],
        tenants,
        running: running.rows.map((r) => ({
          gpuType: r.gpu_type,
          clusterId: r.cluster_id,
          containers: r.containers,
          gpuCount: r.gpu_count,
          endsAt: r.ends_ms === null ? null : Number(r.ends_ms),
        })),
        capacity: capacity.rows.map((r) => ({ gpuType: r.gpu_type, clusterId: r.cluster_id, containers: r.containers, gpus: r.gpus })),
        reservations,
      });
      mark("place_ms");
      const podIds = new Set(pods.map((p) => p.id));
      await writeDecisions(
        c,
        decisions.filter((d) => !podIds.has(d.jobId)),
        new Map(jobs.map((j) => [j.id, j.status])),
      );
      await writePodDecisions(
        c,
        decisions.filter((d) => podIds.has(d.jobId)),
      );

      const placed = decisions.filter((d) => d.outcome === "placed").length;
      const blocked = decisions.filter((d) => d.outcome === "blocked_quota").length;
      // the log's duration is the database's: from this transaction's start (its events' time) to now,
      // so it lines up with what the job events record (the commit follows)
      const log = await c.query<{ id: string }>(
        `INSERT INTO scheduler_logs (trigger, considered, placed, blocked, duration_ms, decisions)
         VALUES ($1, $2, $3, $4, round(extract(epoch FROM clock_timestamp() - now()) * 1000)::int, $5) RETURNING id::text`,
        [trigger, decisions.length, placed, blocked, JSON.stringify(summarise(decisions))],
      );
      mark("write_ms");
      return { id: log.rows[0]!.id, considered: decisions.length, placed, blocked };
    },
    { lock: "scheduler" },
  );
  mark("commit_ms");
  // what callers see is the whole cycle, its commit (where the deferred checks run) included
  return { ...result, duration_ms: Math.round(performance.now() - started) };
}

async function writeDecisions(c: pg.PoolClient, decisions: Decision[], before: Map<string, "queued" | "blocked">) {
  const placed = decisions.filter((d): d is Extract<Decision, { outcome: "placed" }> => d.outcome === "placed");
  if (placed.length) {
    const gpus = GPU_JOBS.empty();
    for (const d of placed) {
      for (const gpuId of d.gpuIds) {
        gpus.gpu_id.push(gpuId);
        gpus.job_id.push(d.jobId);
      }
    }
    // jobs first, then their GPUs: the statement-level check on gpus sees each job running with its gang.
    // A run starts now, when its GPUs are locked, not when this transaction began: it may have
    // waited for the lock while the runs that freed these GPUs ended, and must not start before them.
    const started = await c.query(
      `UPDATE jobs SET status = 'running', started_at = clock_timestamp(), attempts = attempts + 1, fence = gen_random_uuid(), block_reason = NULL,
              pending_reason = NULL, not_before = NULL, updated_at = now()
        WHERE id = ANY($1::uuid[]) AND (status = 'queued' OR (status = 'blocked' AND block_reason = 'quota'))`,
      [placed.map((d) => d.jobId)],
    );
    if (started.rowCount !== placed.length) throw new CycleConflict();
    const allocations = GPU_JOBS.bind(gpus);
    await c.query(
      `UPDATE gpus g SET allocated_job_id = x.job_id, updated_at = now() FROM ${allocations.sql} WHERE g.id = x.gpu_id`,
      allocations.values,
    );
    // each attempt's placement, with its fence (what the node's reports, logs and telemetry are keyed
    // by) and the reservation it runs in, if any (that time is the reservation's, not billed again)
    const placements = PLACEMENTS.bindRows(placed, { job_id: (d) => d.jobId, reservation_id: (d) => d.reservationId ?? null });
    await c.query(
      `INSERT INTO job_placements (job_id, attempt, fence, gpu_ids, node_ids, started_at, reservation_id)
       SELECT j.id, j.attempts, j.fence, array_agg(g.id ORDER BY g.node_id, g.index), array_agg(DISTINCT g.node_id), j.started_at, x.reservation_id
         FROM ${placements.sql} JOIN jobs j ON j.id = x.job_id JOIN gpus g ON g.allocated_job_id = j.id
        GROUP BY j.id, x.reservation_id`,
      placements.values,
    );
    const events = PLACED_EVENTS.bindRows(placed, {
      id: (d) => d.jobId,
      from_status: (d) => before.get(d.jobId)!,
      nodes: (d) => d.nodeIds.length,
      reservation_id: (d) => d.reservationId ?? null,
    });
    await c.query(
      `INSERT INTO job_events (job_id, from_status, to_status, reason, actor)
       SELECT x.id, x.from_status, 'running',
              'placed on ' || x.nodes || CASE WHEN x.nodes = 1 THEN ' node' ELSE ' nodes' END
                || CASE WHEN x.reservation_id IS NULL THEN '' ELSE ' of reservation ' || left(x.reservation_id::text, 8) END, 'scheduler'
         FROM ${events.sql}`,
      events.values,
    );
  }
  // Unplaced jobs: set the reason a tenant reads; move between queued and blocked where the cause changed.
  const waiting = decisions.filter((d): d is Exclude<Decision, { outcome: "placed" }> => d.outcome !== "placed");
  if (waiting.length === 0) return;
  const target = waiting.map((d) => (d.outcome === "blocked_quota" ? "blocked" : "queued"));
  // reasons only (the status column untouched, so no status trigger fires for jobs that stay put)
  const reasons = REASONS.bindRows(waiting, { id: (d) => d.jobId, reason: (d) => d.reason });
  await c.query(
    `UPDATE jobs j SET pending_reason = x.reason, updated_at = now()
       FROM ${reasons.sql}
      WHERE j.id = x.id AND j.status IN ('queued', 'blocked') AND j.pending_reason IS DISTINCT FROM x.reason`,
    reasons.values,
  );
  const changed = waiting.map((d, i) => ({ id: d.jobId, from: before.get(d.jobId)!, to: target[i]! })).filter((x) => x.from !== x.to);
  if (changed.length) {
    const moves = MOVES.bindRows(changed, { id: (x) => x.id, status: (x) => x.to, from_status: (x) => x.from });
    const moved = await c.query(
      `UPDATE jobs j SET status = x.status, block_reason = CASE WHEN x.status = 'blocked' THEN 'quota' END, updated_at = now()
         FROM ${moves.sql}
        WHERE j.id = x.id AND j.status = x.from_status AND (j.status <> 'blocked' OR j.block_reason = 'quota')`,
      moves.values,
    );
    if (moved.rowCount !== changed.length) throw new CycleConflict();
    const events = MOVE_EVENTS.bindRows(changed, { id: (x) => x.id, from_status: (x) => x.from, to_status: (x) => x.to });
    await c.query(
      `INSERT INTO job_events (job_id, from_status, to_status, reason, actor)
       SELECT x.id, x.from_status, x.to_status, CASE WHEN x.to_status = 'blocked' THEN 'over quota' ELSE 'quota freed' END, 'scheduler'
         FROM ${events.sql}`,
      events.values,
    );
  }
}

/** What the log keeps of a cycle's decisions: counts by outcome and the first few, with reasons. */
function summarise(decisions: Decision[]) {
  return decisions
    .slice(0, LOGGED_DECISIONS)
    .map((d) =>
      d.outcome === "placed"
        ? { job_id: d.jobId, outcome: d.outcome, gpus: d.gpuIds.length, nodes: d.nodeIds.length }
        : { job_id: d.jobId, outcome: d.outcome, reason: d.reason },
    );
}
