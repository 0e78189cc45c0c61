import "server-only";
import { Cron } from "croner";
import type pg from "pg";
import { logger } from "@/lib/logger";
import { processMetrics } from "@/lib/observability/process-metrics";
import type { ChannelListener } from "@/lib/db/listen";
import { tryLockSession, unlockSession } from "@/lib/db/locks";
import { listenForEvents } from "./cross-process";
import type { BackgroundEvent } from "./events";
import { localBus } from "./local-bus";
import type { BackgroundJob, JobInput } from "./types";

export interface RunRecord {
  jobId: string;
  trigger: "cron" | "event" | "manual";
  ran: boolean;
  result?: Record<string, unknown>;
  error?: string;
}

/**
 * Runs background jobs inside the app process when no Inngest server is configured: on their
 * cron schedules and on local events (debounced). Each run holds a Postgres advisory lock named
 * after the job, so with several app instances only one runs a given job at a time; the others
 * skip that tick instead of queueing behind it. A scheduled run also claims its due time in
 * background_cron_slots under that lock, so each due time runs once across instances, even when
 * one instance's timer fires after another's run for the same time already ended.
 */
export class InProcessDriver {
  private crons: Cron[] = [];
  private timers = new Map<string, NodeJS.Timeout>();
  private inFlight = new Set<string>();
  private again = new Set<string>();
  private running = new Set<Promise<unknown>>();
  private stopped = false;
  private listener: ChannelListener | null = null;
  private readonly onEvent = (e: BackgroundEvent) => this.handleEvent(e);

  constructor(
    private readonly jobs: BackgroundJob[],
    private readonly pool: pg.Pool,
    private readonly onRun: (r: RunRecord) => void = () => {},
    /** also hear events that processes without a driver send through the database (cross-process.ts) */
    private readonly opts: { listenChannel?: string } = {},
  ) {}

  start(): void {
    for (const job of this.jobs) {
      const pattern = job.everySeconds ? `*/${job.everySeconds} * * * * *` : job.cron;
      // the due time, not the moment the timer fired: every instance names a tick the same way
      if (pattern)
        this.crons.push(
          new Cron(
            pattern,
            { timezone: "UTC", protect: true },
            (self) => void this.runDue(job, self.previousRuns(1, new Date(Date.now() + 1))[0] ?? new Date()),
          ),
        );
    }
    localBus.on("event", this.onEvent);
    if (this.opts.listenChannel) this.listener = listenForEvents(this.onEvent, this.opts.listenChannel);
    logger.info("in-process background driver started", { jobs: this.jobs.map((j) => j.id) });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    localBus.off("event", this.onEvent);
    await this.listener?.stop();
    for (const c of this.crons) c.stop();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await Promise.allSettled([...this.running]);
  }

  private handleEvent(e: BackgroundEvent): void {
    for (const job of this.jobs) {
      if (!job.events?.includes(e.name)) continue;
      // An event must never be lost to a run already under way: that run may have read the world
      // before the event's change. Mark it, and run once more when the current run ends.
      if (this.inFlight.has(job.id)) {
        this.again.add(job.id);
        continue;
      }
      if (this.timers.has(job.id)) continue; // already scheduled: this event joins that run
      this.schedule(job, job.debounceMs ?? 0, { event: e }, 0);
    }
  }

  private schedule(job: BackgroundJob, wait: number, input: JobInput, attempt: number) {
    this.timers.set(
      job.id,
      setTimeout(async () => {
        this.timers.delete(job.id);
        const record = await this.runJob(job, "event", input);
        // another instance held the lock: its run may predate this event, so try again shortly
        if (!record.ran && !this.stopped && attempt < 50) this.schedule(job, 20, input, attempt + 1);
      }, wait),
    );
  }

  /** Runs a job for its scheduled time `dueAt` unless some instance already ran that time. */
  runDue(job: BackgroundJob, dueAt: Date): Promise<RunRecord> {
    return this.runJob(job, "cron", {}, dueAt);
  }

  /** Runs a job now under its lock; returns what happened. Also used by tests and scripts. */
  async runJob(job: BackgroundJob, trigger: RunRecord["trigger"], input: JobInput = {}, dueAt?: Date): Promise<RunRecord> {
    if (this.stopped) return { jobId: job.id, trigger, ran: false };
    if (this.inFlight.has(job.id)) {
      this.again.add(job.id);
      return { jobId: job.id, trigger, ran: false };
    }
    this.inFlight.add(job.id);
    const work = this.runLocked(job, trigger, input, dueAt);
    this.running.add(work);
    const started = performance.now();
    try {
      const record = await work;
      const m = processMetrics();
      m.backgroundRuns.inc({ job: job.id, outcome: !record.ran ? "skipped" : record.error ? "failed" : "ok" });
      if (record.ran) m.backgroundDuration.observe({ job: job.id }, (performance.now() - started) / 1000);
      this.onRun(record);
      return record;
    } finally {
      this.running.delete(work);
      this.inFlight.delete(job.id);
      // the same event again, or a rerun without one (never a sweep: it claimed no due time)
      if (this.again.delete(job.id) && !this.stopped) this.schedule(job, 0, input.event ? { event: input.event } : { rerun: true }, 0);
    }
  }

  /**
   * Never rejects: a database that is down (restarting, say) makes this tick a skipped one with
   * its reason, and the connection, with any lock it may still hold, is dropped, not reused.
   */
  private async runLocked(job: BackgroundJob, trigger: RunRecord["trigger"], input: JobInput, dueAt?: Date): Promise<RunRecord> {
    const lock = `background:${job.id}` as const;
    const unreachable = (e: unknown): RunRecord => {
      logger.warn("background job could not reach the database; its next run tries again", {
        job: job.id,
        error: e instanceof Error ? e.message : String(e),
      });
      return { jobId: job.id, trigger, ran: false, error: e instanceof Error ? e.message : String(e) };
    };
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      return unreachable(e);
    }
    let broken: Error | undefined;
    try {
      if (!(await tryLockSession(client, lock))) return { jobId: job.id, trigger, ran: false };
      try {
        if (dueAt) {
          const claimed = await client.query(
            `INSERT INTO background_cron_slots (job_id, due_at) VALUES ($1, $2)
             ON CONFLICT (job_id) DO UPDATE SET due_at = EXCLUDED.due_at WHERE background_cron_slots.due_at < EXCLUDED.due_at`,
            [job.id, dueAt],
          );
          if (claimed.rowCount === 0) return { jobId: job.id, trigger, ran: false };
        }
        const result = await job.run(input);
        return { jobId: job.id, trigger, ran: true, result };
      } catch (e) {
        logger.error("background job failed", { job: job.id, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
        return { jobId: job.id, trigger, ran: true, error: e instanceof Error ? e.message : String(e) };
      } finally {
        await unlockSession(client, lock);
      }
    } catch (e) {
      broken = e instanceof Error ? e : new Error(String(e));
      return unreachable(e);
    } finally {
      client.release(broken);
    }
  }
}
