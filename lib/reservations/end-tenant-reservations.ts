import "server-only";
import type { SqlClient } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import { oneOf } from "@/lib/vocabulary";
import { recordReservationEvent } from "./record-event";
import { endAction, RESERVATION_STATUSES } from "./reservation-lifecycle";
import {
  CANCEL_HOLDINGS,
  CANCEL_RESERVATION,
  LOCK_TENANT_LIVE_RESERVATIONS,
  RELEASE_HOLDINGS,
  RELEASE_RESERVATION,
  TRANSACTION_NOW,
} from "./statements";

/**
 * A suspended tenant keeps no nodes: inside the caller's transaction, each of its reservations
 * that has not started is cancelled (nothing was held, nothing is billed) and each running one is
 * released now (its nodes are free, its billing ends now), with the reason in its event log. The
 * work inside them is the suspension's to stop (lib/tenants/tenant-work.ts). Reactivation does not
 * bring them back: the nodes may be someone else's by then; the tenant books again.
 */
export async function endTenantReservations(c: SqlClient, tenantIds: string[], why: string, actor: string) {
  const rows = await run(c, LOCK_TENANT_LIVE_RESERVATIONS, [tenantIds]);
  if (rows.length === 0) return { reservations_cancelled: 0, reservations_released: 0 };
  const { now } = (await runOne(c, TRANSACTION_NOW))!;
  let cancelled = 0;
  let released = 0;
  for (const r of rows) {
    const status = oneOf(RESERVATION_STATUSES, r.status, "reservations.status");
    const action = endAction({ status, startsAt: r.starts_at.getTime(), endsAt: r.ends_at.getTime() }, now.getTime());
    if (!action.ok) continue;
    if (action.kind === "cancel") {
      await run(c, CANCEL_HOLDINGS, [r.id]);
      await run(c, CANCEL_RESERVATION, [why, r.id]);
      await recordReservationEvent(c, { reservationId: r.id, kind: "cancelled", message: `Cancelled: ${why}; nothing is billed`, actor });
      cancelled++;
    } else {
      await run(c, RELEASE_HOLDINGS, [why, r.id]);
      await run(c, RELEASE_RESERVATION, [why, r.id]);
      await recordReservationEvent(c, {
        reservationId: r.id,
        kind: "released",
        message: `Released: ${why}. Its nodes are free from now and billing stopped`,
        actor,
        details: { booked_until: r.ends_at.toISOString() },
      });
      released++;
    }
  }
  return { reservations_cancelled: cancelled, reservations_released: released };
}
