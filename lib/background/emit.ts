import "server-only";
import { inngestConfigured } from "@/lib/env";
import { inngest } from "@/lib/integrations/inngest";
import { logger } from "@/lib/logger";
import { sendToDriver } from "./cross-process";
import { parseEventPayload, type EventName, type EventPayloads } from "./events";
import { localBus } from "./local-bus";

/**
 * Emits a background event. With an Inngest server configured it is sent there; otherwise it
 * goes to the in-process driver, or, in a process that runs none (the ingest server), to the
 * app's driver through the database. Never sent into the void: `inngest.send()` without a
 * server blocks the request for seconds and then fails.
 */
export async function emitEvent<E extends EventName>(name: E, data: EventPayloads[E]): Promise<void> {
  const payload = parseEventPayload(name, data);
  if (inngestConfigured()) {
    try {
      await inngest.send({ name, data: payload });
      return;
    } catch (e) {
      // The cron sweep behind every event-driven job picks up whatever this event would have done.
      logger.warn("inngest send failed; the sweep will catch up", { event: name, error: String(e) });
      return;
    }
  }
  if (localBus.listenerCount("event") > 0) {
    localBus.emit("event", { name, data: payload });
    return;
  }
  try {
    await sendToDriver(name, payload);
  } catch (e) {
    logger.warn("could not pass an event to the background driver; the sweep will catch up", { event: name, error: String(e) });
  }
}
