import "server-only";
import { pool } from "@/lib/db/client";
import { ChannelListener } from "@/lib/db/listen";
import { logger } from "@/lib/logger";
import { readBackgroundEvent, type BackgroundEvent, type EventName, type EventPayloads } from "./events";

// Without Inngest, background events reach the in-process driver of the app through the local
// bus — but a process that runs no driver (the agents' ingest server) has nobody on its bus. Its
// events go through the database instead: NOTIFY here, and the app's driver LISTENs. A fatal XID
// reported to the ingest server then wakes alert evaluation and remediation at once, as it does
// when reported to the app. An event sent while no driver listens is lost; the drivers' periodic
// sweeps do what it would have started, as when an Inngest send fails.

export const BACKGROUND_EVENTS_CHANNEL = "background_events";

export async function sendToDriver<E extends EventName>(
  name: E,
  data: EventPayloads[E],
  channel = BACKGROUND_EVENTS_CHANNEL,
): Promise<void> {
  await pool().query("SELECT pg_notify($1, $2)", [channel, JSON.stringify({ name, data })]);
}

/** Hears events sent with sendToDriver; malformed ones are logged and dropped. */
export function listenForEvents(onEvent: (e: BackgroundEvent) => void, channel = BACKGROUND_EVENTS_CHANNEL): ChannelListener {
  const listener = new ChannelListener(channel, {
    onNotify(payload) {
      try {
        const raw: unknown = JSON.parse(payload);
        const event = typeof raw === "object" && raw !== null ? readBackgroundEvent(raw) : undefined;
        if (!event) throw new Error("an unknown event, or data that does not match its schema");
        onEvent(event);
      } catch (e) {
        logger.warn("dropped a malformed background event from another process", { error: String(e) });
      }
    },
    onLost() {},
  });
  listener.start();
  return listener;
}
