import { z } from "zod";

// The typed catalogue of background events. Services emit them (lib/background/emit.ts);
// Inngest functions and the in-process driver subscribe through the job registry.
export const eventSchemas = {
  "platform/tenant.suspended": z.object({ tenant_id: z.string() }),
  "platform/audit.prune.requested": z.object({ requested_by: z.string() }),
  "scheduler/run.requested": z.object({ reason: z.string() }),
  "alerts/evaluate.requested": z.object({ reason: z.string() }),
  "metrics/rollups.fold.requested": z.object({ reason: z.string() }),
  "endpoints/reconcile.requested": z.object({ reason: z.string() }),
  "pods/reconcile.requested": z.object({ reason: z.string() }),
  "pipelines/tool-call.requested": z.object({ reason: z.string() }),
  "alerts/notifications.queued": z.object({ count: z.number().int() }),
  "billing/invoices.requested": z.object({ requested_by: z.string() }),
  "providers/offers.refresh.requested": z.object({ requested_by: z.string() }),
  "burst/run.requested": z.object({ reason: z.string() }),
  "provisioning/advance.requested": z.object({ reason: z.string() }),
  "fleet/handover.requested": z.object({ reason: z.string() }),
} as const;

export type EventName = keyof typeof eventSchemas;
export type EventPayloads = { [K in EventName]: z.infer<(typeof eventSchemas)[K]> };

/** One event as a job receives it: a name and the payload of that name, checked together. */
export type BackgroundEvent<E extends EventName = EventName> = { [K in E]: { name: K; data: EventPayloads[K] } }[E];

const isEventName = (name: string): name is EventName => Object.hasOwn(eventSchemas, name);

/** Checks a payload against its event's schema (throws when it does not match). */
export function parseEventPayload<E extends EventName>(name: E, data: unknown): EventPayloads[E] {
  // TypeScript cannot follow a schema looked up by a generic key to its output: E's schema gives E's payload
  return eventSchemas[name].parse(data) as EventPayloads[E];
}

/**
 * Reads an event that arrived from outside this process (Inngest, another process's NOTIFY): its
 * name must be in the catalogue and its data must match that name's schema; otherwise undefined.
 */
export function readBackgroundEvent(raw: { name?: unknown; data?: unknown }): BackgroundEvent | undefined {
  if (typeof raw.name !== "string" || !isEventName(raw.name)) return undefined;
  const data = eventSchemas[raw.name].safeParse(raw.data);
  // the data was parsed by this name's own schema: the pair is one member of the union
  return data.success ? ({ name: raw.name, data: data.data } as BackgroundEvent) : undefined;
}
