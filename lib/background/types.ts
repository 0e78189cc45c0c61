import type { BackgroundEvent, EventName } from "./events";

/**
 * Durable steps: Inngest's `step.run` when Inngest runs the job (each memoized and retried on its
 * own), a plain call in-process. A step's result must be a plain JSON value: a memoized one comes
 * back from Inngest parsed from JSON.
 */
export interface DurableStep {
  run<T>(id: string, fn: () => Promise<T>): Promise<T>;
}

/**
 * A unit of background work, declared once. Inngest runs it as a durable function when an
 * Inngest server is configured; otherwise the in-process driver runs the very same `run`
 * on the same schedule and events. `run` calls one service and returns a JSON summary.
 */
export interface BackgroundJob<E extends EventName = EventName> {
  id: string;
  description: string;
  /** cron expression (UTC) for the sweep that catches whatever events missed */
  cron?: string;
  /** the in-process driver runs the sweep this often instead (Inngest's cron granularity is a minute) */
  everySeconds?: number;
  events?: readonly E[];
  /** events arriving closer together than this run the job once */
  debounceMs?: number;
  /** the job makes its own durable steps (input.step) instead of running as one */
  durable?: boolean;
  run(input: JobInput<E>): Promise<Record<string, unknown>>;
}

/** What a run is given. */
export interface JobInput<E extends EventName = EventName> {
  /** the event that woke it: one of the job's own events; absent for a sweep or a manual run */
  event?: BackgroundEvent<E>;
  /** the in-process driver runs it once more, without an event, because it was asked to while it ran */
  rerun?: boolean;
  step?: DurableStep;
}

/**
 * Declares a job with its run typed by the events it lists. The registry holds jobs of every
 * event; the driver and Inngest only ever give a job the events it lists.
 */
export function defineJob<const E extends EventName = never>(job: BackgroundJob<E>): BackgroundJob {
  return job;
}
