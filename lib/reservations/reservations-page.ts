import "server-only";
import type { TenantPrincipal } from "@/lib/auth/principal";
import { fleetGpuTypes } from "@/lib/jobs/queries";
import { getTenantOrThrow, tenantFigures } from "@/lib/tenants/queries";
import { isOneOf } from "@/lib/vocabulary";
import { listRates } from "@/lib/billing/rates";
import { rateFor } from "@/lib/billing/money";
import { bookableClusters, getCapacity, gpusPerNodeByType, reservationsBetween } from "./queries";
import { LIVE_STATUSES } from "./reservation-lifecycle";

const DAY = 86_400_000;

/** A datetime-local value (UTC, as the forms use) or an ISO time; undefined when neither. */
const instant = (v: string | string[] | undefined) => {
  const t = typeof v === "string" && v ? Date.parse(/Z|[+-]\d\d:\d\d$/.test(v) ? v : `${v}Z`) : NaN;
  return Number.isNaN(t) ? undefined : t;
};

/**
 * A tenant's reservations page: its calendar (a week back, two months ahead), which bookings are
 * live and which active now, and the fleet's free capacity for the window asked about (by default
 * a day from the next whole hour, for the first GPU type the fleet has).
 */
export async function reservationsPageData(p: TenantPrincipal, q: Record<string, string | string[] | undefined>, now = Date.now()) {
  const nextHour = Math.ceil(now / 3_600_000) * 3_600_000;
  const [types, clusters, tenant, figures, perNode, rates] = await Promise.all([
    fleetGpuTypes(),
    bookableClusters(),
    getTenantOrThrow(p, p.tenantId),
    tenantFigures(p.tenantId),
    gpusPerNodeByType(),
    listRates(),
  ]);
  const ratesByType = Object.fromEntries(rates.map((r) => [r.gpu_type, r.cents_per_hour]));
  // what a booking of whole nodes of each type costs an hour per node: the booking form's price for its window
  const pricing = Object.fromEntries(
    types.map((t) => [t, { cents_per_gpu_hour: rateFor(ratesByType, t), gpus_per_node: perNode[t] ?? { min: 0, max: 0 } }]),
  );
  const gpuType = typeof q.gpu_type === "string" && types.includes(q.gpu_type) ? q.gpu_type : types[0];
  const from = instant(q.from) ?? nextHour;
  const to = Math.max(instant(q.to) ?? from + DAY, from + 60_000);
  const calendarFrom = Math.floor(now / DAY) * DAY;
  const [rows, capacity] = await Promise.all([
    reservationsBetween(p, new Date(calendarFrom - 7 * DAY), new Date(calendarFrom + 60 * DAY)),
    gpuType ? getCapacity({ gpu_type: gpuType, from: new Date(from).toISOString(), to: new Date(to).toISOString() }) : null,
  ]);
  const live = rows.filter((r) => isOneOf(LIVE_STATUSES, r.status));
  const activeNow = live.filter((r) => Date.parse(r.starts_at) <= now && Date.parse(r.ends_at) > now);
  return {
    now,
    types,
    clusters,
    tenant,
    figures,
    gpuType,
    from,
    to,
    rows,
    capacity,
    live,
    activeNow,
    pricing,
    /** booking commits money: the organisation's admins book */
    mayBook: p.role === "tenant_admin",
  };
}
