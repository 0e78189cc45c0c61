import type { z } from "zod";
import type { EventName, EventPayloads } from "./events";

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
  run(input: { event?: { name: E; data: EventPayloads[E] } }): Promise<Record<string, unknown>>;
}

export type EventSchemaMap = Record<string, z.ZodType<Record<string, unknown>>>;
