import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db, txClient, type Tx } from "@/lib/db/client";
import { run, runOne, type RowOf } from "@/lib/db/statement";
import { invalidTransition, notFound } from "@/lib/errors";
import { oneOf } from "@/lib/vocabulary";
import { getReservationOrThrow } from "./queries";
import { endAction, RESERVATION_STATUSES, type ReservationStatus } from "./reservation-lifecycle";
import { recordReservationEvent } from "./record-event";
import { returnUnusedPrepayment } from "@/lib/tenants/tenant-limits";
import { stopWorkInside, type MovedWork } from "./reservation-work";
import { startHandoversAfterTenancy } from "@/lib/handover/start-handover";
import { TENANCY_NODES_OF_RESERVATION } from "@/lib/handover/statements";
import {
  CANCEL_HOLDINGS,
  CANCEL_RESERVATION,
  LOCK_RESERVATION,
  RELEASE_HOLDINGS,
  RELEASE_RESERVATION,
  TRANSACTION_NOW,
} from "./statements";

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

/** A locked reservation row, its status narrowed (an unknown one is reported, not passed on). */
export function lockedReservation(row: RowOf<typeof LOCK_RESERVATION>): LockedReservation {
  return { ...row, status: oneOf(RESERVATION_STATUSES, row.status, "reservations.status") };
}

/** The reservation, row-locked, if the caller may see it (another tenant's is not found). */
export async function lockReservationOrThrow(tx: Tx, actor: Actor, id: string): Promise<LockedReservation> {
  const scope = tenantScope(actor.principal);
  const [r] = await run(tx, LOCK_RESERVATION, [id, scope.tenantId ?? null]);
  if (!r) throw notFound("Reservation");
  return lockedReservation(r);
}

/**
 * DELETE /api/reservations/{id}: before its start a cancellation (nothing was held, nothing is
 * billed), after it an early release (its nodes are free from now, and billing stops now). Either
 * way the work inside it stops (lib/reservations/reservation-work), in the same transaction.
 */
export async function endReservation(actor: Actor, id: string) {
  const moved = await db().$transaction(async (tx) => {
    const r = await lockReservationOrThrow(tx, actor, id);
    const { now } = (await runOne(tx, TRANSACTION_NOW))!;
    const action = endAction({ status: r.status, startsAt: r.starts_at.getTime(), endsAt: r.ends_at.getTime() }, now.getTime());
    if (!action.ok) throw invalidTransition(action.reason);
    const label = actor.principal.label;
    if (action.kind === "cancel") {
      const work = await stopWorkInside(tx, id, "its reservation was cancelled", label);
      await run(tx, CANCEL_HOLDINGS, [id]);
      await run(tx, CANCEL_RESERVATION, [`cancelled by ${label}`, id]);
      // a reservation paid up front gives all of it back: it billed nothing
      const returned = await returnUnusedPrepayment(tx, id, label);
      await recordReservationEvent(txClient(tx), {
        reservationId: id,
        kind: "cancelled",
        message: "Cancelled before its start; nothing is billed",
        actor: label,
      });
      await recordAudit(tx, actor, {
        action: "reservation.cancelled",
        targetType: "reservation",
        targetId: id,
        tenantId: r.tenant_id,
        details: { starts_at: r.starts_at.toISOString(), ...(returned ? { returned_cents: returned } : {}) },
      });
      return work;
    }
    const work = await releaseNow(tx, r, "released early", label);
    // its holdings' final segments are billed (and drawn from what was paid up front): the rest comes back
    const returned = await returnUnusedPrepayment(tx, id, label);
    await recordReservationEvent(txClient(tx), {
      reservationId: id,
      kind: "released",
      message: `Released early; it was booked until ${r.ends_at.toISOString()}. Its nodes are free from now and billing stopped`,
      actor: label,
      details: { booked_until: r.ends_at.toISOString(), ...summary(work) },
    });
    await recordAudit(tx, actor, {
      action: "reservation.released",
      targetType: "reservation",
      targetId: id,
      tenantId: r.tenant_id,
      details: { booked_until: r.ends_at.toISOString(), ...summary(work), ...(returned ? { returned_cents: returned } : {}) },
    });
    return work;
  });
  await wake(moved);
  return getReservationOrThrow(actor.principal, id);
}

/**
 * Ends an active reservation now: the work inside stops, every holding still open ends now and is
 * closed (which bills its last segment), and the reservation's end moves to now.
 */
async function releaseNow(tx: Tx, r: LockedReservation, why: string, actor: string): Promise<MovedWork> {
  const work = await stopWorkInside(tx, r.id, `its reservation was ${why}`, actor);
  // the end is never before a holding's start (the database wants a window of at least a millisecond)
  await run(tx, RELEASE_HOLDINGS, [why, r.id]);
  await run(tx, RELEASE_RESERVATION, [why, r.id]);
  // the tenant has left its nodes: each is wiped and inspected before anyone else gets it
  const nodes = await run(tx, TENANCY_NODES_OF_RESERVATION, [r.id]);
  work.handovers = await startHandoversAfterTenancy(tx, nodes, `reservation ${r.id.slice(0, 8)} ${why}`, actor);
  return work;
}

export const summary = (w: MovedWork) => ({
  jobs_cancelled: w.cancelled.length,
  jobs_requeued: w.requeued.length,
  replicas_stopped: w.replicas,
});

/** Freed nodes take queued work at once; stopped replicas are replaced where they may run. */
export async function wake(moved: MovedWork[] | MovedWork) {
  await emitEvent("scheduler/run.requested", { reason: "reservation changed" });
  if ([moved].flat().some((w) => w.replicas > 0)) await emitEvent("endpoints/reconcile.requested", { reason: "reservation changed" });
  if ([moved].flat().some((w) => (w.handovers?.length ?? 0) > 0))
    await emitEvent("fleet/handover.requested", { reason: "a tenancy ended" });
}
