import "server-only";
import { tenantFilter, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db, txClient, type Tx } from "@/lib/db/client";
import { invalidTransition, notFound } from "@/lib/errors";
import { getReservationOrThrow } from "./queries";
import { endAction, type ReservationStatus } from "./reservation-lifecycle";
import { recordReservationEvent } from "./record-event";
import { stopWorkInside, type MovedWork } from "./reservation-work";

export interface LockedReservation {
  id: string;
  tenant_id: string;
  status: ReservationStatus;
  starts_at: Date;
  ends_at: Date;
  gpu_type: string;
  node_count: number;
  degraded_at: Date | null;
}

/** The reservation, row-locked, if the caller may see it (another tenant's is not found). */
export async function lockReservationOrThrow(tx: Tx, actor: Actor, id: string): Promise<LockedReservation> {
  const scope = tenantFilter(actor.principal);
  const [r] = await tx.$queryRaw<LockedReservation[]>`
    SELECT id::text, tenant_id::text, status, starts_at, ends_at, gpu_type, node_count, degraded_at FROM reservations
     WHERE id = ${id}::uuid AND (${scope.tenantId ?? null}::uuid IS NULL OR tenant_id = ${scope.tenantId ?? null}::uuid) FOR UPDATE`;
  if (!r) throw notFound("Reservation");
  return r;
}

/**
 * DELETE /api/reservations/{id}: before its start a cancellation (nothing was held, nothing is
 * billed), after it an early release (its nodes are free from now, and billing stops now). Either
 * way the work inside it stops (lib/reservations/reservation-work), in the same transaction.
 */
export async function endReservation(actor: Actor, id: string) {
  const moved = await db().$transaction(async (tx) => {
    const r = await lockReservationOrThrow(tx, actor, id);
    const [{ now }] = await tx.$queryRaw<[{ now: Date }]>`SELECT now() AS now`;
    const action = endAction({ status: r.status, startsAt: r.starts_at.getTime(), endsAt: r.ends_at.getTime() }, now.getTime());
    if (!action.ok) throw invalidTransition(action.reason);
    const label = actor.principal.label;
    if (action.kind === "cancel") {
      const work = await stopWorkInside(tx, id, "its reservation was cancelled", label);
      await tx.$executeRaw`UPDATE reservation_nodes SET live = false, closed_at = now(), close_reason = 'cancelled' WHERE reservation_id = ${id}::uuid AND closed_at IS NULL`;
      await tx.$executeRaw`
        UPDATE reservations SET status = 'cancelled', ended_at = now(), end_reason = ${`cancelled by ${label}`}, degraded_at = NULL, degraded_reason = NULL, updated_at = now()
         WHERE id = ${id}::uuid`;
      await recordReservationEvent(txClient(tx), { reservationId: id, kind: "cancelled", message: "Cancelled before its start; nothing is billed", actor: label });
      await recordAudit(tx, actor, { action: "reservation.cancelled", targetType: "reservation", targetId: id, tenantId: r.tenant_id, details: { starts_at: r.starts_at.toISOString() } });
      return work;
    }
    const work = await releaseNow(tx, r, "released early", label);
    await recordReservationEvent(txClient(tx), {
      reservationId: id,
      kind: "released",
      message: `Released early; it was booked until ${r.ends_at.toISOString()}. Its nodes are free from now and billing stopped`,
      actor: label,
      details: { booked_until: r.ends_at.toISOString(), ...summary(work) },
    });
    await recordAudit(tx, actor, { action: "reservation.released", targetType: "reservation", targetId: id, tenantId: r.tenant_id, details: { booked_until: r.ends_at.toISOString(), ...summary(work) } });
    return work;
  });
  await wake(moved);
  return getReservationOrThrow(actor.principal, id);
}

/**
 * Ends an active reservation now: the work inside stops, every holding still open ends now and is
 * closed (which bills its last segment), and the reservation's end moves to now.
 */
export async function releaseNow(tx: Tx, r: LockedReservation, why: string, actor: string): Promise<MovedWork> {
  const work = await stopWorkInside(tx, r.id, `its reservation was ${why}`, actor);
  // the end is never before a holding's start (the database wants a window of at least a millisecond)
  await tx.$executeRaw`
    UPDATE reservation_nodes SET ends_at = GREATEST(LEAST(ends_at, now()), starts_at + interval '1 millisecond'),
           closed_at = GREATEST(now(), LEAST(ends_at, now()), starts_at + interval '1 millisecond'), close_reason = ${why}
     WHERE reservation_id = ${r.id}::uuid AND live AND closed_at IS NULL`;
  await tx.$executeRaw`
    UPDATE reservations SET status = 'released', ends_at = GREATEST(now(), starts_at + interval '1 millisecond'), ended_at = now(), end_reason = ${why},
           degraded_at = NULL, degraded_reason = NULL, updated_at = now()
     WHERE id = ${r.id}::uuid`;
  return work;
}

export const summary = (w: MovedWork) => ({ jobs_cancelled: w.cancelled.length, jobs_requeued: w.requeued.length, replicas_stopped: w.replicas });

/** Freed nodes take queued work at once; stopped replicas are replaced where they may run. */
export async function wake(moved: MovedWork[] | MovedWork) {
  await emitEvent("scheduler/run.requested", { reason: "reservation changed" });
  if ([moved].flat().some((w) => w.replicas > 0)) await emitEvent("endpoints/reconcile.requested", { reason: "reservation changed" });
}
