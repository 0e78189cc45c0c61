// Money and billing periods, pure. Amounts are integer cents; the database computes each usage
// segment's amount with the same rule as `segmentAmountCents` (bill_usage_segment in SQL).

/** gpu_seconds × cents per hour / 3600, rounded half up: applied once per usage segment. */
export function segmentAmountCents(gpuSeconds: number, centsPerHour: number): number {
  return Math.round((gpuSeconds * centsPerHour) / 3600);
}

export function formatCents(cents: number | bigint, currency = "USD"): string {
  const n = Number(cents);
  return new Intl.NumberFormat("en-US", { style: "currency", currency, minimumFractionDigits: 2 }).format(n / 100);
}

/** "INV-000042": numbers are sequential without gaps (assigned under a lock). */
export function invoiceLabel(n: number): string {
  return `INV-${String(n).padStart(6, "0")}`;
}

/** The last full calendar month before `now`, in UTC: [start, end). */
export function lastFullMonth(now: Date): { start: Date; end: Date } {
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const start = new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth() - 1, 1));
  return { start, end };
}

/** The calendar month containing `now`, in UTC. */
export function currentMonth(now: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start, end };
}

export const gpuHours = (gpuSeconds: number | bigint) => Math.round((Number(gpuSeconds) / 3600) * 100) / 100;

/** The price per GPU-hour of a type: its own rate, else the `*` rate that prices every other type, else none. */
export function rateFor(ratesByType: Record<string, number>, gpuType: string): number | null {
  return ratesByType[gpuType] ?? ratesByType["*"] ?? null;
}

/** What `gpus` GPUs cost for `seconds` at a rate, as the meter bills it (one segment). */
export function estimateCents(gpus: number, centsPerHour: number, seconds: number): number {
  return segmentAmountCents(gpus * seconds, centsPerHour);
}

/**
 * When a prepaid balance reaches zero at the current spend (cents per hour of what runs now), or
 * null when nothing runs or the balance is already gone. Pure: the billing page's low-balance banner.
 */
export function projectedZeroAt(balanceCents: number, spendCentsPerHour: number, now: Date): Date | null {
  if (balanceCents <= 0 || spendCentsPerHour <= 0) return null;
  return new Date(now.getTime() + (balanceCents / spendCentsPerHour) * 3_600_000);
}

/** "3 h 20 min", "2 days 4 h", "12 min": a duration as a person reads it. */
export function formatDuration(ms: number): string {
  const min = Math.max(0, Math.round(ms / 60_000));
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return `${h} h${min % 60 ? ` ${min % 60} min` : ""}`;
  const d = Math.floor(h / 24);
  return `${d} days${h % 24 ? ` ${h % 24} h` : ""}`;
}

/** A line that would read "0.00 GPU-hours, $0.00" (a run of a few seconds): left off invoices; its usage is still settled. */
export function isNegligibleLine(gpuSeconds: number | bigint, amountCents: number | bigint): boolean {
  return Number(amountCents) === 0 && gpuHours(gpuSeconds) === 0;
}

/** How many hours of spend a prepaid balance should cover before the console warns. */
const LOW_BALANCE_HOURS = 24;

/** empty: at or below zero; low: under LOW_BALANCE_HOURS of the current spend; ok otherwise (or nothing runs). */
export function balanceLevel(balanceCents: number, spendCentsPerHour: number): "empty" | "low" | "ok" {
  if (balanceCents <= 0) return "empty";
  return spendCentsPerHour > 0 && balanceCents < spendCentsPerHour * LOW_BALANCE_HOURS ? "low" : "ok";
}

/** The reference a tenant writes on a bank transfer that adds funds, so the operator can match it ("GF-1A2B3C4D"). */
export function depositReference(tenantId: string): string {
  return `GF-${tenantId.replace(/-/g, "").slice(0, 8).toUpperCase()}`;
}
