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
