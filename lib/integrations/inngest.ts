import { EventType, Inngest, eventType } from "inngest";
import { eventSchemas, type EventName } from "@/lib/background/events";

export const inngest = new Inngest({ id: "gpuforge" });

/** Typed Inngest event definitions made from the shared zod schemas. */
export const inngestEvents = Object.fromEntries(
  Object.entries(eventSchemas).map(([name, schema]) => [name, eventType(name, { schema: schema as never })]),
) as unknown as Record<EventName, EventType<EventName, undefined>>;
