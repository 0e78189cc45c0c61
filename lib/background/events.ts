import { z } from "zod";

// The typed catalogue of background events. Services emit them (lib/background/emit.ts);
// Inngest functions and the in-process driver subscribe through the job registry.
export const eventSchemas = {
  "platform/tenant.suspended": z.object({ tenant_id: z.string() }),
  "platform/audit.prune.requested": z.object({ requested_by: z.string() }),
  "scheduler/run.requested": z.object({ reason: z.string() }),
  "alerts/evaluate.requested": z.object({ reason: z.string() }),
  "endpoints/reconcile.requested": z.object({ reason: z.string() }),
  "pipelines/tool-call.requested": z.object({ reason: z.string() }),
  "alerts/notifications.queued": z.object({ count: z.number().int() }),
  "billing/invoices.requested": z.object({ requested_by: z.string() }),
} as const;

export type EventName = keyof typeof eventSchemas;
export type EventPayloads = { [K in EventName]: z.infer<(typeof eventSchemas)[K]> };
