/**
 * SLA arithmetic over per-minute rollups (pure).
 *
 * Time counts only while the endpoint was expected to serve: after it was created, before now,
 * outside periods it was stopped. Edge minutes count for the part of them inside the window.
 * - A minute is available when samples arrived in it, not all of them reported unhealthy, and
 *   under 5 % of its requests failed. A minute nobody reported in is down: silence is an outage.
 * - availability_pct = available minutes / expected minutes.
 * - p95 compliance = the share of minutes with traffic whose p95 met the target.
 * - Error budget: the downtime the availability target allows over the window
 *   ((100 − target) % of expected minutes), what was used, and what remains (negative: overspent).
 */
export const MINUTE_MS = 60_000;
export const ERROR_RATE_DOWN = 0.05;

export interface MinuteBucket {
  bucket: number;
  samples: number;
  unhealthySamples: number;
  requests: number;
  errors: number;
  p95Ms: number;
}

export interface SlaInput {
  from: number;
  to: number;
  now: number;
  /** [start, end) spans when the endpoint should have been serving; end null = still */
  serving: Array<{ start: number; end: number | null }>;
  buckets: MinuteBucket[];
  targets: { p95Ms: number | null; availabilityPct: number | null };
}

export interface SlaReport {
  from: string;
  to: string;
  minutes_expected: number;
  minutes_available: number;
  availability_pct: number | null;
  requests: number;
  errors: number;
  success_rate_pct: number | null;
  minutes_with_traffic: number;
  p95_compliance_pct: number | null;
  p95_worst_ms: number | null;
  targets: { p95_ms: number | null; availability_pct: number | null };
  compliant: { availability: boolean | null; p95: boolean | null };
  error_budget: { allowed_minutes: number; used_minutes: number; remaining_minutes: number; remaining_pct: number | null } | null;
}

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/** The part of [a, b) inside the serving spans, in ms. */
function servedMs(a: number, b: number, serving: SlaInput["serving"], now: number): number {
  let total = 0;
  for (const s of serving) {
    const lo = Math.max(a, s.start);
    const hi = Math.min(b, s.end ?? now, now);
    if (hi > lo) total += hi - lo;
  }
  return total;
}

export function minuteAvailable(b: MinuteBucket | undefined): boolean {
  if (!b || b.samples === 0) return false;
  if (b.unhealthySamples >= b.samples) return false;
  return b.requests === 0 || b.errors / b.requests < ERROR_RATE_DOWN;
}

export function computeSla(i: SlaInput): SlaReport {
  const to = Math.min(i.to, i.now);
  const byMinute = new Map(i.buckets.map((b) => [b.bucket, b]));
  let expected = 0;
  let available = 0;
  let requests = 0;
  let errors = 0;
  let traffic = 0;
  let p95Ok = 0;
  let worst: number | null = null;
  for (let m = Math.floor(i.from / MINUTE_MS) * MINUTE_MS; m < to; m += MINUTE_MS) {
    const weight = servedMs(Math.max(m, i.from), Math.min(m + MINUTE_MS, to), i.serving, i.now) / MINUTE_MS;
    if (weight <= 0) continue;
    const b = byMinute.get(m);
    expected += weight;
    if (minuteAvailable(b)) available += weight;
    if (b && b.requests > 0) {
      requests += b.requests;
      errors += b.errors;
      traffic += weight;
      if (i.targets.p95Ms === null || b.p95Ms <= i.targets.p95Ms) p95Ok += weight;
      worst = worst === null ? b.p95Ms : Math.max(worst, b.p95Ms);
    }
  }
  const availabilityPct = expected > 0 ? (100 * available) / expected : null;
  const p95Pct = traffic > 0 ? (100 * p95Ok) / traffic : null;
  const budget =
    i.targets.availabilityPct === null
      ? null
      : (() => {
          const allowed = ((100 - i.targets.availabilityPct) / 100) * expected;
          const used = expected - available;
          return {
            allowed_minutes: round(allowed),
            used_minutes: round(used),
            remaining_minutes: round(allowed - used),
            remaining_pct: allowed > 0 ? round((100 * (allowed - used)) / allowed, 2) : null,
          };
        })();
  return {
    from: new Date(i.from).toISOString(),
    to: new Date(to).toISOString(),
    minutes_expected: round(expected),
    minutes_available: round(available),
    availability_pct: availabilityPct === null ? null : round(availabilityPct),
    requests,
    errors,
    success_rate_pct: requests > 0 ? round((100 * (requests - errors)) / requests) : null,
    minutes_with_traffic: round(traffic),
    p95_compliance_pct: i.targets.p95Ms === null || p95Pct === null ? null : round(p95Pct),
    p95_worst_ms: worst,
    targets: { p95_ms: i.targets.p95Ms, availability_pct: i.targets.availabilityPct },
    compliant: {
      availability: i.targets.availabilityPct === null || availabilityPct === null ? null : availabilityPct >= i.targets.availabilityPct,
      // the p95 target holds when the p95 of at least 95 % of the minutes with traffic met it
      p95: i.targets.p95Ms === null || p95Pct === null ? null : p95Pct >= 95,
    },
    error_budget: budget,
  };
}

/** Serving spans from an endpoint's life: created, stopped/started transitions, deleted. */
export function servingSpans(createdAt: number, deletedAt: number | null, events: Array<{ at: number; from: string | null; to: string }>) {
  const spans: Array<{ start: number; end: number | null }> = [];
  let start: number | null = createdAt;
  for (const e of [...events].sort((a, b) => a.at - b.at)) {
    if (e.to === "stopped" && start !== null) {
      spans.push({ start, end: e.at });
      start = null;
    } else if (e.from === "stopped" && start === null) start = e.at;
  }
  if (start !== null) spans.push({ start, end: deletedAt });
  return spans;
}
