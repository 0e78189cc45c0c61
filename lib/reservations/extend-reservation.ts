import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db, pool, txClient } from "@/lib/db/client";
import { isRetryableBookingConflict } from "@/lib/db/sql-state";
import { run } from "@/lib/db/statement";
import { invalidTransition, noCapacity, unsatisfiable, validationFailed } from "@/lib/errors";
import { lockReservationOrThrow, wake } from "./end-reservation";
import { getReservationOrThrow } from "./queries";
import { canExtend } from "./reservation-lifecycle";
import { recordReservationEvent } from "./record-event";
import { EXTEND_HOLDINGS, EXTEND_RESERVATION, EXTENSION_BLOCKERS, EXTENSION_QUOTA } from "./statements";
import { LOCK_TENANT } from "@/lib/tenants/statements";
import { PREPAID_OF } from "@/lib/tenants/limit-statements";
import { chargeReservation, reservationTerms } from "@/lib/tenants/tenant-limits";
import { formatCents } from "@/lib/billing/money";

/**
 * PATCH /api/reservations/{id} {ends_at}: a later end, when every node it holds is free for the
 * extra time (the database's exclusion constraint decides; a node another booking holds then
 * answers 409 no_capacity naming it). The extra time counts against the quota like the rest.
 */
export async function extendReservation(actor: Actor, id: string, input: { ends_at: string }) {
  const newEnd = new Date(input.ends_at);
  try {
    await db().$transaction(async (tx) => {
      const r = await lockReservationOrThrow(tx, actor, id);
      const check = canExtend(
        { status: r.status, startsAt: r.starts_at.getTime(), endsAt: r.ends_at.getTime() },
        newEnd.getTime(),
        Date.now(),
      );
      if (!check.ok)
        throw check.code === "invalid_transition"
          ? invalidTransition(check.reason)
          : validationFailed([{ path: "ends_at", message: check.reason }]);
      const [quota] = await run(tx, EXTENSION_QUOTA, [r.ends_at, newEnd, r.tenant_id, id]);
      if (quota!.peak + quota!.mine > quota!.gpu_quota) {
        throw unsatisfiable(
          `Reserved GPUs count against the quota while active: the extra time already has up to ${quota!.peak} reserved at once besides this reservation's ${quota!.mine}, over the quota of ${quota!.gpu_quota}`,
          [{ path: "ends_at", message: "Over the quota in the extra time" }],
        );
      }
      // the tenant's longest reservation, and a reservation paid up front pays for its extra time now
      await run(tx, LOCK_TENANT, [r.tenant_id]);
      const [paid] = await run(tx, PREPAID_OF, [id]);
      const extraS = (newEnd.getTime() - r.ends_at.getTime()) / 1000;
      const terms = await reservationTerms(tx, r.tenant_id, {
        gpuType: r.gpu_type,
        gpus: quota!.mine,
        seconds: extraS,
        lengthS: (newEnd.getTime() - r.starts_at.getTime()) / 1000,
        counting: false,
      });
      if (paid?.prepaid_cents !== null && paid?.prepaid_cents !== undefined && terms.prepaidCents !== null)
        await chargeReservation(
          tx,
          id,
          r.tenant_id,
          terms.prepaidCents,
          `Extension of a reservation to ${newEnd.toISOString()}, paid up front (${formatCents(terms.prepaidCents)})`,
          actor.principal.label,
        );
      await run(tx, EXTEND_HOLDINGS, [newEnd, id, r.ends_at]);
      await run(tx, EXTEND_RESERVATION, [newEnd, id]);
      await recordReservationEvent(txClient(tx), {
        reservationId: id,
        kind: "extended",
        message: `Extended from ${r.ends_at.toISOString()} to ${newEnd.toISOString()}`,
        actor: actor.principal.label,
        details: { from: r.ends_at.toISOString(), to: newEnd.toISOString() },
      });
      await recordAudit(tx, actor, {
        action: "reservation.extended",
        targetType: "reservation",
        targetId: id,
        tenantId: r.tenant_id,
        details: { from: r.ends_at.toISOString(), to: newEnd.toISOString() },
      });
    });
  } catch (e) {
    if (!isRetryableBookingConflict(e)) throw e;
    throw noCapacity("Its nodes are not all free for the extra time", await blockers(id, newEnd));
  }
  await wake([]);
  return getReservationOrThrow(actor.principal, id);
}

/** Which of its nodes another booking (or work) holds in the extra time, and from when. */
async function blockers(id: string, newEnd: Date) {
  const rows = await run(pool(), EXTENSION_BLOCKERS, [id, newEnd]);
  if (rows.length === 0) return [{ path: "ends_at", message: "A node it holds is busy in the extra time; try again" }];
  return [
    {
      path: "ends_at",
      message: `Booked by another reservation: ${rows.map((r) => `${r.hostname} from ${r.starts_at.toISOString()}`).join(", ")}; the latest possible end is ${rows[0]!.starts_at.toISOString()}`,
    },
  ];
}
