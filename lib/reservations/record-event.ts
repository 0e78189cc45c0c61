import "server-only";
import type { SqlClient } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import type { ReservationEventKind } from "./reservation-lifecycle";
import { RECORD_RESERVATION_EVENT } from "./statements";

/** Appends to a reservation's event log inside the caller's transaction. */
export async function recordReservationEvent(
  c: SqlClient,
  e: {
    reservationId: string;
    kind: ReservationEventKind;
    message: string;
    actor: string;
    nodeId?: string | null;
    details?: Record<string, unknown>;
  },
): Promise<void> {
  await run(c, RECORD_RESERVATION_EVENT, [e.reservationId, e.kind, e.message, e.actor, e.nodeId ?? null, JSON.stringify(e.details ?? {})]);
}
