import "server-only";
import { inTransaction } from "@/lib/db/transaction";
import { env } from "@/lib/env";
import { processMetrics } from "@/lib/observability/process-metrics";
import { PodConflict, waitingPods, writePodDecisions } from "@/lib/pods/schedule-pods";
import { readFreeGpus, readNodeBookings, readTenantQuotas } from "./capacity-queries";
import { phaseClock, profiled, type CycleProfile } from "./cycle-profile";
import { groupFreeNodes } from "./free-nodes";
import { place, type ActiveReservation, type Decision, type QueuedJob } from "./placement";
import { CycleConflict, lockChosenGpus, recordWaiting, startPlacedJobs, type Placed } from "./write-decisions";

const MAX_QUEUE = 50_000;
/** The node (alias n) is held by a reservation in force now: its GPUs are not on-demand capacity. */
const RESERVED_NOW = `EXISTS (SELECT 1 FROM reservation_nodes rn WHERE rn.node_id = n.id AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now())`;
const LOGGED_DECISIONS = 200;

export interface CycleResult {
  id: string;
  considered: number;
  placed: number;
  blocked: number;
  duration_ms: number;
}

/**
 * One scheduling cycle in one transaction. Cycles are serialised across app instances by an
 * advisory lock. Free GPUs and waiting jobs are read without locks (a cycle uses only some of
 * them): the GPUs it chose are locked and checked still free before it writes, every write
 * re-checks the job is still waiting, and if anything changed meanwhile (a GPU taken by an
 * endpoint replica, a job cancelled) the cycle rolls back and runs again from fresh facts
 * (lib/scheduler/write-decisions.ts). The database triggers re-check every allocation (one job
 * per GPU, gang sizes, quotas).
 */
export async function runSchedulerCycle(trigger: string, opts: { profile?: CycleProfile } = {}): Promise<CycleResult> {
  // GPUs another transaction held or took during an attempt: the next ones leave them out
  const busy = new Set<string>();
  for (let attempt = 1; ; attempt++) {
    try {
      const cycle = await attemptCycle(trigger, opts.profile, busy);
      const m = processMetrics();
      m.schedulerCycle.observe(cycle.duration_ms / 1000);
      m.schedulerPlacements.inc(cycle.placed);
      m.schedulerConsidered.inc(cycle.considered);
      return cycle;
    } catch (e) {
      if (!(e instanceof CycleConflict || e instanceof PodConflict) || attempt >= 5) throw e;
      if (e instanceof CycleConflict) for (const g of e.busyGpus) busy.add(g);
    }
  }
}

async function attemptCycle(trigger: string, profile: CycleProfile | undefined, busy: ReadonlySet<string>): Promise<CycleResult> {
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
      const free = (await readFreeGpus(c)).filter((g) => !busy.has(g.id));
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
      const before = new Map(jobs.map((j) => [j.id, j.status]));
      const placedJobs: Placed[] = [];
      const waitingJobs: Array<Exclude<Decision, Placed>> = [];
      const podDecisions: Decision[] = [];
      for (const d of decisions) {
        if (podIds.has(d.jobId)) podDecisions.push(d);
        else if (d.outcome === "placed") placedJobs.push(d);
        else waitingJobs.push(d);
      }
      // the GPUs chosen, jobs' and pods', locked and checked still free; then the writes
      const chosen = decisions.filter((d): d is Placed => d.outcome === "placed");
      await lockChosenGpus(
        c,
        chosen.flatMap((d) => d.gpuIds),
        chosen.flatMap((d) => d.nodeIds),
        bookings,
      );
      await startPlacedJobs(c, placedJobs, before, new Map(free.map((g, i) => [g.id, i])), new Map(free.map((g) => [g.id, g.node_id])));
      await recordWaiting(c, waitingJobs, before);
      await writePodDecisions(c, podDecisions);

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
