import type { z } from "zod";
import type { EventName, EventPayloads } from "./events";

/** Durable steps: Inngest's `step.run` when Inngest runs the job (each memoized and retried on its own), a plain call in-process. */
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
  run(input: { event?: { name: E; data: EventPayloads[E] }; step?: DurableStep }): Promise<Record<string, unknown>>;
}

export type EventSchemaMap = Record<string, z.ZodType<Record<string, unknown>>>;
