// The reservation lifecycle, pure. A reservation is booked `confirmed` with concrete nodes, becomes
// `active` at its start and `completed` at its end (the background sweep records both; placement
// and the database go by the clock, so nothing waits for the sweep). Before its start the tenant
// may cancel it (`cancelled`, never billed); while active, release it early (`released`, billed to
// the moment of release); while confirmed or active, extend its end when its nodes are free for
// the extra time. `degraded` is a flag beside the status: a held node left service and no
// replacement was free yet.
//
//   confirmed ──start──▶ active ──end──▶ completed
//       │                   └──release──▶ released
//       └──cancel──▶ cancelled

export const RESERVATION_STATUSES = ["confirmed", "active", "completed", "released", "cancelled"] as const;
export type ReservationStatus = (typeof RESERVATION_STATUSES)[number];
export const LIVE_STATUSES: readonly ReservationStatus[] = ["confirmed", "active"];

export const RESERVATION_EVENT_KINDS = [
  "created",
  "started",
  "extended",
  "released",
  "cancelled",
  "completed",
  "degraded",
  "node_replaced",
  "restored",
  "work_stopped",
] as const;
export type ReservationEventKind = (typeof RESERVATION_EVENT_KINDS)[number];

/** Bookable lengths and how far ahead: what bare-metal providers offer, from an hour's test to a year's cluster. */
export const MIN_RESERVATION_S = 60;
export const MAX_RESERVATION_S = 366 * 86_400;
export const MAX_LEAD_S = 366 * 86_400;

export interface ReservationState {
  status: ReservationStatus;
  startsAt: number;
  endsAt: number;
}

/** Where the clock puts a live reservation, whatever the sweep has recorded yet. */
export function phase(r: ReservationState, now: number): "upcoming" | "active" | "over" | "ended" {
  if (!LIVE_STATUSES.includes(r.status)) return "ended";
  if (now >= r.endsAt) return "over";
  return now >= r.startsAt ? "active" : "upcoming";
}

export type EndAction = { ok: true; kind: "cancel" | "release" } | { ok: false; reason: string };

/** DELETE /api/reservations/{id}: before the start it is a cancellation, after it an early release. */
export function endAction(r: ReservationState, now: number): EndAction {
  switch (phase(r, now)) {
    case "upcoming":
      return { ok: true, kind: "cancel" };
    case "active":
      return { ok: true, kind: "release" };
    case "over":
      return { ok: false, reason: "This reservation has already reached its end" };
    default:
      return { ok: false, reason: `This reservation is ${r.status}` };
  }
}

export type ExtendCheck = { ok: true } | { ok: false; code: "invalid_transition" | "validation"; reason: string };

export function canExtend(r: ReservationState, newEnd: number, now: number): ExtendCheck {
  const p = phase(r, now);
  if (p === "ended" || p === "over")
    return {
      ok: false,
      code: "invalid_transition",
      reason: p === "over" ? "This reservation has already reached its end" : `This reservation is ${r.status}`,
    };
  if (newEnd <= r.endsAt)
    return { ok: false, code: "validation", reason: "Must be later than the current end; release early to end sooner" };
  if ((newEnd - r.startsAt) / 1000 > MAX_RESERVATION_S)
    return { ok: false, code: "validation", reason: `A reservation lasts at most ${MAX_RESERVATION_S / 86_400} days` };
  return { ok: true };
}

/** What the sweep records for a live reservation at `now`: its start, its end, or nothing. */
export function sweepStep(r: ReservationState, now: number): "start" | "complete" | null {
  if (!LIVE_STATUSES.includes(r.status)) return null;
  if (now >= r.endsAt) return "complete";
  if (r.status === "confirmed" && now >= r.startsAt) return "start";
  return null;
}
