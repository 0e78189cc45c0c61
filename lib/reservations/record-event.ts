import "server-only";
import type { SqlClient } from "@/lib/db/client";
import type { ReservationEventKind } from "./reservation-lifecycle";

/** Appends to a reservation's event log inside the caller's transaction. */
export async function recordReservationEvent(
  c: SqlClient,
  e: { reservationId: string; kind: ReservationEventKind; message: string; actor: string; nodeId?: string | null; details?: Record<string, unknown> },
): Promise<void> {
  await c.query(`INSERT INTO reservation_events (reservation_id, kind, message, actor, node_id, details) VALUES ($1, $2, $3, $4, $5, $6)`, [
    e.reservationId,
    e.kind,
    e.message,
    e.actor,
    e.nodeId ?? null,
    JSON.stringify(e.details ?? {}),
  ]);
}
