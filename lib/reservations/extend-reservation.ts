import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db, pool, txClient } from "@/lib/db/client";
import { isRetryableBookingConflict } from "@/lib/db/sql-state";
import { invalidTransition, noCapacity, unsatisfiable, validationFailed } from "@/lib/errors";
import { lockReservationOrThrow, wake } from "./end-reservation";
import { getReservationOrThrow } from "./queries";
import { canExtend } from "./reservation-lifecycle";
import { recordReservationEvent } from "./record-event";

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
      const check = canExtend({ status: r.status, startsAt: r.starts_at.getTime(), endsAt: r.ends_at.getTime() }, newEnd.getTime(), Date.now());
      if (!check.ok) throw check.code === "invalid_transition" ? invalidTransition(check.reason) : validationFailed([{ path: "ends_at", message: check.reason }]);
      const [quota] = await tx.$queryRaw<Array<{ gpu_quota: number; peak: number; mine: number }>>`
        WITH h AS (
          SELECT GREATEST(starts_at, ${r.ends_at}) AS s, LEAST(ends_at, ${newEnd}) AS e, gpu_count FROM reservation_nodes
           WHERE tenant_id = ${r.tenant_id}::uuid AND live AND reservation_id <> ${id}::uuid AND starts_at < ${newEnd} AND ends_at > ${r.ends_at}
        )
        SELECT t.gpu_quota,
               COALESCE((SELECT max((SELECT sum(h2.gpu_count) FROM h h2 WHERE h2.s <= p.s AND h2.e > p.s)) FROM h p), 0)::int AS peak,
               (SELECT COALESCE(sum(gpu_count), 0)::int FROM reservation_nodes WHERE reservation_id = ${id}::uuid AND live AND closed_at IS NULL AND ends_at = ${r.ends_at}) AS mine
          FROM tenants t WHERE t.id = ${r.tenant_id}::uuid FOR UPDATE OF t`;
      if (quota!.peak + quota!.mine > quota!.gpu_quota) {
        throw unsatisfiable(`Reserved GPUs count against the quota while active: the extra time already has up to ${quota!.peak} reserved at once besides this reservation's ${quota!.mine}, over the quota of ${quota!.gpu_quota}`, [
          { path: "ends_at", message: "Over the quota in the extra time" },
        ]);
      }
      await tx.$executeRaw`
        UPDATE reservation_nodes SET ends_at = ${newEnd} WHERE reservation_id = ${id}::uuid AND live AND closed_at IS NULL AND ends_at = ${r.ends_at}`;
      await tx.$executeRaw`UPDATE reservations SET ends_at = ${newEnd}, updated_at = now() WHERE id = ${id}::uuid`;
      await recordReservationEvent(txClient(tx), { reservationId: id, kind: "extended", message: `Extended from ${r.ends_at.toISOString()} to ${newEnd.toISOString()}`, actor: actor.principal.label, details: { from: r.ends_at.toISOString(), to: newEnd.toISOString() } });
      await recordAudit(tx, actor, { action: "reservation.extended", targetType: "reservation", targetId: id, tenantId: r.tenant_id, details: { from: r.ends_at.toISOString(), to: newEnd.toISOString() } });
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
  const { rows } = await pool().query<{ hostname: string; starts_at: Date }>(
    `SELECT n.hostname, min(o.starts_at) AS starts_at FROM reservation_nodes mine JOIN reservations r ON r.id = mine.reservation_id
       JOIN reservation_nodes o ON o.node_id = mine.node_id AND o.live AND o.reservation_id <> r.id AND o.starts_at < $2 AND o.ends_at > r.ends_at
       JOIN nodes n ON n.id = mine.node_id
      WHERE mine.reservation_id = $1 AND mine.live AND mine.closed_at IS NULL GROUP BY n.hostname ORDER BY 2`,
    [id, newEnd],
  );
  if (rows.length === 0) return [{ path: "ends_at", message: "A node it holds is busy in the extra time; try again" }];
  return [{ path: "ends_at", message: `Booked by another reservation: ${rows.map((r) => `${r.hostname} from ${r.starts_at.toISOString()}`).join(", ")}; the latest possible end is ${rows[0]!.starts_at.toISOString()}` }];
}
