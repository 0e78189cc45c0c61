import "server-only";
import { lockForTransaction } from "@/lib/db/locks";
import { inTransaction } from "@/lib/db/transaction";
import { processMetrics } from "@/lib/observability/process-metrics";
import { PodConflict, writePodDecisions } from "@/lib/pods/schedule-pods";
import { readCapacityFacts, readCycleFacts, type CycleScope } from "./cycle-facts";
import { phaseClock, profiled, type CycleProfile } from "./cycle-profile";
import { groupFreeNodes } from "./free-nodes";
import { freeCapacity, place, type Decision } from "./placement";
import { CycleConflict, lockChosenGpus, recordWaiting, startPlacedJobs, type Placed } from "./write-decisions";

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
 * per GPU, gang sizes, quotas). `scope: "placeable"` (the background cycles, woken by events and
 * every few seconds) reads only the work of GPU types with a free GPU (lib/scheduler/cycle-facts.ts);
 * `scope: "waiting"` reads the rest, places nothing and keeps its reasons and quota states current:
 * it reads and decides under a lock of its own, beside the cycles that place (a backlog of work for
 * full GPU types never holds up a submit for a free one), and takes theirs only for its writes, which
 * are none when nothing changed. "all" (a manual run, the benchmark) reads everything.
 *
 * The "waiting" cycle may have decided about a job that a placing cycle started meanwhile (its GPU
 * type gained a free GPU): its writes come after, under the placing lock, re-check the job is still
 * waiting, and a move that finds it changed rolls the cycle back to run again from fresh facts.
 */
export async function runSchedulerCycle(trigger: string, opts: { profile?: CycleProfile; scope?: CycleScope } = {}): Promise<CycleResult> {
  // GPUs another transaction held or took during an attempt: the next ones leave them out
  const busy = new Set<string>();
  for (let attempt = 1; ; attempt++) {
    try {
      const cycle = await attemptCycle(trigger, opts.scope ?? "all", opts.profile, busy);
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

async function attemptCycle(
  trigger: string,
  scope: CycleScope,
  profile: CycleProfile | undefined,
  busy: ReadonlySet<string>,
): Promise<CycleResult> {
  const started = performance.now();
  const mark = phaseClock(profile);
  const result = await inTransaction(
    async (connection): Promise<Omit<CycleResult, "duration_ms">> => {
      mark("lock_ms");
      const c = profiled(connection, profile);
      const facts = await readCycleFacts(c, scope, busy);
      if (!facts) return { id: "", considered: 0, placed: 0, blocked: 0 };
      const { jobs, pods, free, bookings } = facts;
      mark("read_ms");
      const nodes = groupFreeNodes(free, bookings);
      const input = { now: Date.now(), nodes, queue: [...jobs, ...pods], tenants: facts.tenants, reservations: facts.reservations };
      // Work that all starts now is decided without running work and the fleet's whole capacity
      // (placement.ts, freeCapacity): a cycle woken by a submit reads neither when the work it read
      // fits in the free GPUs and all of it starts; otherwise it reads them and decides again.
      const wanted = input.queue.reduce((n, j) => n + j.gpuCount, 0);
      let decisions = wanted <= free.length ? place({ ...input, running: [], capacity: freeCapacity(nodes) }) : null;
      mark("place_ms");
      if (!decisions?.every((d) => d.outcome === "placed")) {
        const capacity = await readCapacityFacts(c, facts.types);
        mark("read_ms");
        decisions = place({ ...input, ...capacity });
        mark("place_ms");
      }
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
      // the waiting scope read and decided beside the placing cycles; it writes under their lock, as
      // every writer of waiting work does (lib/db/locks.ts), for the few statements its writes take
      if (scope === "waiting") await lockForTransaction(c, "scheduler");
      // the GPUs chosen, jobs' and pods', locked and checked still free; then the writes
      const chosen = decisions.filter((d): d is Placed => d.outcome === "placed");
      await lockChosenGpus(
        c,
        chosen.flatMap((d) => d.gpuIds),
        chosen.flatMap((d) => d.nodeIds),
        bookings,
      );
      await startPlacedJobs(c, placedJobs, before, new Map(free.map((g, i) => [g.id, i])), new Map(free.map((g) => [g.id, g.node_id])));
      await recordWaiting(c, waitingJobs, before, facts.reasonsBefore);
      await writePodDecisions(c, podDecisions);

      const placed = decisions.filter((d) => d.outcome === "placed").length;
      const blocked = decisions.filter((d) => d.outcome === "blocked_quota").length;
      // the log's duration is the database's: from this transaction's start (its events' time) to now,
      // so it lines up with what the job events record (the commit follows)
      const log = await c.query<{ id: string }>({
        name: "scheduler.log-cycle",
        text: `INSERT INTO scheduler_logs (trigger, considered, placed, blocked, duration_ms, decisions)
         VALUES ($1, $2, $3, $4, round(extract(epoch FROM clock_timestamp() - now()) * 1000)::int, $5) RETURNING id::text`,
        values: [trigger, decisions.length, placed, blocked, JSON.stringify(summarise(decisions))],
      });
      mark("write_ms");
      return { id: log.rows[0]!.id, considered: decisions.length, placed, blocked };
    },
    // the cycles that place are serialised; the "waiting" scope places nothing and has a lock of its own
    { lock: scope === "waiting" ? "scheduler:waiting" : "scheduler" },
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
