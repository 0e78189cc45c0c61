import "server-only";
import type { TenantPrincipal } from "@/lib/auth/principal";
import { nullIfRefused } from "@/lib/errors";
import { isOneOf } from "@/lib/vocabulary";
import { getReservationOrThrow, listReservationEvents, reservationJson, workInReservation } from "./queries";
import { endAction, LIVE_STATUSES } from "./reservation-lifecycle";
import { tenantNodeVerdicts } from "@/lib/attestation/tenant-verdicts";

/**
 * Everything a reservation's page shows, or null when the caller may not see it. What an admin may
 * do with it (end it, and how; extend it) is decided here from its lifecycle, not by the page.
 */
export async function reservationPageData(p: TenantPrincipal, id: string, now = Date.now()) {
  const row = await nullIfRefused(getReservationOrThrow(p, id));
  if (!row) return null;
  const r = reservationJson(row);
  const [events, work, verdicts] = await Promise.all([
    listReservationEvents(p, id),
    workInReservation(p, id),
    tenantNodeVerdicts(p, r.nodes),
  ]);
  const admin = p.role === "tenant_admin";
  const end = endAction({ status: r.status, startsAt: Date.parse(r.starts_at), endsAt: Date.parse(r.ends_at) }, now);
  return {
    reservation: r,
    events,
    work,
    verdicts,
    hours: (Date.parse(r.ends_at) - Date.parse(r.starts_at)) / 3_600_000,
    /** cancel (not begun) or release (running), for the organisation's admins */
    mayEnd: admin && end.ok ? end.kind : null,
    mayExtend: admin && isOneOf(LIVE_STATUSES, r.status) && Date.parse(r.ends_at) > now,
  };
}
