/**
 * SLA arithmetic over per-minute facts (pure).
 *
 * Time counts only while the endpoint was promised to serve: from the first time it became ready
 * after it was created (or started again) until it was stopped or deleted, and never after now.
 * Provisioning before the first ready replica is set-up, not downtime: a brand-new endpoint has no
 * figures yet. Edge minutes count for the part of them inside the window.
 *
 * Each minute is one of (`classifyMinute`):
 * - up:       serving samples arrived, not all of them unhealthy, under 5 % of requests failed;
 * - idle:     no samples, but the reconciler saw a ready replica all minute long (healthy, no traffic
 *             reported: a replica that stops reporting is marked unhealthy after STALE_AFTER_S);
 * - failing:  every sample reported unhealthy;
 * - errors:   5 % or more of the minute's requests failed;
 * - silent:   no samples, and the reconciler saw no ready replica at some point of the minute
 *             (right after a minute nobody observed, that says nothing yet: replicas marked stale
 *             because the control plane itself was away get STALE_AFTER_S to report again, so
 *             such a minute is no_data, not silent);
 * - no_data:  nobody observed the minute at all (no samples, no reconciler pass: the control plane
 *             itself was not running). It is neither up nor down: it is left out of the expected
 *             minutes and reported on its own, so an outage of the observer is never billed to the
 *             endpoint, and never hidden either.
 * up and idle are available; failing, errors and silent are down.
 *
 * availability_pct = available minutes / expected minutes (null while there are none).
 * p95 compliance = the share of minutes with traffic whose p95 met the target.
 * Error budget: the downtime the availability target allows over the expected minutes
 * ((100 − target) % of them), what was used, what remains (never below 0) and, past the budget,
 * by how much it was overspent. remaining < allowed ⇔ availability < target, so the budget, the
 * compliance flag and the sla_breach alert (which evaluates this same function) always agree.
 * The latency objective has a budget of its own, read the same way: the slow minutes it allows
 * (5 % of the minutes with traffic), how many were slow, what remains (issue 32: the page showed
 * one budget, of downtime only, while the latency objective was missed).
 *
 * served_from: where the figures start, the later of the window's start and the first minute the
 * endpoint was promised to serve in it: a three-minute-old endpoint's figures cover three minutes,
 * and the page says so instead of naming the whole window.
 */
export const MINUTE_MS = 60_000;
const ERROR_RATE_DOWN = 0.05;
/** The latency objective: the p95 target holds in at least this share of the minutes with traffic. */
const P95_OBJECTIVE_PCT = 95;

export interface MinuteBucket {
  bucket: number;
  samples: number;
  unhealthySamples: number;
  requests: number;
  errors: number;
  p95Ms: number;
}

/** What the reconciler saw of an endpoint during one minute: the fewest ready replicas of its passes. */
export interface ObservedMinute {
  bucket: number;
  minReady: number;
}

export type MinuteState = "up" | "idle" | "failing" | "errors" | "silent" | "no_data";
const AVAILABLE_STATES: readonly MinuteState[] = ["up", "idle"];

export interface SlaInput {
  from: number;
  to: number;
  now: number;
  /** [start, end) spans when the endpoint was promised to serve; end null = still */
  serving: Array<{ start: number; end: number | null }>;
  buckets: MinuteBucket[];
  observed: ObservedMinute[];
  targets: { p95Ms: number | null; availabilityPct: number | null };
}

export interface SlaReport {
  from: string;
  to: string;
  served_from: string | null;
  minutes_expected: number;
  minutes_available: number;
  minutes_idle: number;
  minutes_down: number;
  minutes_no_data: number;
  availability_pct: number | null;
  requests: number;
  errors: number;
  success_rate_pct: number | null;
  minutes_with_traffic: number;
  p95_compliance_pct: number | null;
  p95_worst_ms: number | null;
  targets: { p95_ms: number | null; availability_pct: number | null; p95_objective_pct: number };
  compliant: { availability: boolean | null; p95: boolean | null };
  error_budget: ErrorBudget | null;
  latency_budget: ErrorBudget | null;
}

export interface ErrorBudget {
  allowed_minutes: number;
  used_minutes: number;
  remaining_minutes: number;
  remaining_pct: number | null;
  overspent_minutes: number;
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

/** `previousObserved`: whether anyone observed the minute before (samples or a reconciler pass). */
export function classifyMinute(b: MinuteBucket | undefined, o: ObservedMinute | undefined, previousObserved = true): MinuteState {
  if (b && b.samples > 0) {
    if (b.unhealthySamples >= b.samples) return "failing";
    if (b.requests > 0 && b.errors / b.requests >= ERROR_RATE_DOWN) return "errors";
    return "up";
  }
  if (!o) return "no_data";
  if (o.minReady > 0) return "idle";
  return previousObserved ? "silent" : "no_data";
}

/** Every minute of the window the endpoint was promised to serve, with its state and weight (the share of it inside the window). */
function minutesOf(i: SlaInput): Array<{ minute: number; weight: number; state: MinuteState; bucket: MinuteBucket | undefined }> {
  const to = Math.min(i.to, i.now);
  const byMinute = new Map(i.buckets.map((b) => [b.bucket, b]));
  const observed = new Map(i.observed.map((o) => [o.bucket, o]));
  const out = [];
  for (let m = Math.floor(i.from / MINUTE_MS) * MINUTE_MS; m < to; m += MINUTE_MS) {
    const weight = servedMs(Math.max(m, i.from), Math.min(m + MINUTE_MS, to), i.serving, i.now) / MINUTE_MS;
    if (weight <= 0) continue;
    const bucket = byMinute.get(m);
    const previousObserved = observed.has(m - MINUTE_MS) || (byMinute.get(m - MINUTE_MS)?.samples ?? 0) > 0;
    out.push({ minute: m, weight, state: classifyMinute(bucket, observed.get(m), previousObserved), bucket });
  }
  return out;
}

export function computeSla(i: SlaInput): SlaReport {
  let expected = 0;
  let available = 0;
  let idle = 0;
  let noData = 0;
  let requests = 0;
  let errors = 0;
  let traffic = 0;
  let p95Ok = 0;
  let worst: number | null = null;
  let servedFrom: number | null = null;
  for (const { minute, weight, state, bucket: b } of minutesOf(i)) {
    servedFrom ??= Math.max(minute, i.from, firstServed(i.serving));
    if (state === "no_data") {
      noData += weight;
      continue;
    }
    expected += weight;
    if (AVAILABLE_STATES.includes(state)) available += weight;
    if (state === "idle") idle += weight;
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
  return {
    from: new Date(i.from).toISOString(),
    to: new Date(Math.min(i.to, i.now)).toISOString(),
    served_from: servedFrom === null ? null : new Date(servedFrom).toISOString(),
    minutes_expected: round(expected),
    minutes_available: round(available),
    minutes_idle: round(idle),
    minutes_down: round(expected - available),
    minutes_no_data: round(noData),
    availability_pct: availabilityPct === null ? null : round(availabilityPct),
    requests,
    errors,
    success_rate_pct: requests > 0 ? round((100 * (requests - errors)) / requests) : null,
    minutes_with_traffic: round(traffic),
    p95_compliance_pct: i.targets.p95Ms === null || p95Pct === null ? null : round(p95Pct),
    p95_worst_ms: worst,
    targets: { p95_ms: i.targets.p95Ms, availability_pct: i.targets.availabilityPct, p95_objective_pct: P95_OBJECTIVE_PCT },
    compliant: {
      availability: i.targets.availabilityPct === null || availabilityPct === null ? null : availabilityPct >= i.targets.availabilityPct,
      // the p95 target holds when the p95 of at least 95 % of the minutes with traffic met it
      p95: i.targets.p95Ms === null || p95Pct === null ? null : p95Pct >= P95_OBJECTIVE_PCT,
    },
    error_budget: i.targets.availabilityPct === null ? null : errorBudget(i.targets.availabilityPct, expected, expected - available),
    latency_budget: i.targets.p95Ms === null ? null : errorBudget(P95_OBJECTIVE_PCT, traffic, traffic - p95Ok),
  };
}

/** The start of the earliest promised span (a minute's weight already clips it to the window). */
function firstServed(serving: SlaInput["serving"]): number {
  return serving.reduce((m, s) => Math.min(m, s.start), Number.POSITIVE_INFINITY);
}

/** The downtime a target allows over `expected` minutes, and how much of it `used` took (clamped at 0 left; the excess is reported as overspent). */
export function errorBudget(targetPct: number, expected: number, used: number) {
  const allowed = ((100 - targetPct) / 100) * expected;
  const left = allowed - used;
  return {
    allowed_minutes: round(allowed),
    used_minutes: round(used),
    remaining_minutes: round(Math.max(0, left)),
    remaining_pct: allowed > 0 ? round(Math.max(0, (100 * left) / allowed), 2) : null,
    overspent_minutes: round(Math.max(0, -left)),
  };
}

export interface TimelineSlot {
  start: string;
  /** minutes of each kind inside the slot (weights: edge minutes count partly) */
  up: number;
  idle: number;
  down: number;
  no_data: number;
}

/** The window cut into slots of `stepMs`, each telling how its promised minutes went: the SLA page's strip. */
export function slaTimeline(i: SlaInput, stepMs: number): TimelineSlot[] {
  const slots = new Map<number, TimelineSlot>();
  for (let s = Math.floor(i.from / stepMs) * stepMs; s < Math.min(i.to, i.now); s += stepMs) {
    slots.set(s, { start: new Date(s).toISOString(), up: 0, idle: 0, down: 0, no_data: 0 });
  }
  for (const { minute, weight, state } of minutesOf(i)) {
    const slot = slots.get(Math.floor(minute / stepMs) * stepMs);
    if (!slot) continue;
    const kind = state === "up" || state === "idle" || state === "no_data" ? state : "down";
    slot[kind] = round(slot[kind] + weight);
  }
  return [...slots.values()];
}

const PROMISING: readonly string[] = ["ready", "scaling", "degraded"];

/**
 * Promised spans from an endpoint's status history: a span opens the first time the endpoint is
 * ready (or scaling/degraded, which only follow a ready one) after it was created or started
 * again, and closes when it is stopped or deleted.
 */
export function servingSpans(deletedAt: number | null, events: Array<{ at: number; from: string | null; to: string }>) {
  const spans: Array<{ start: number; end: number | null }> = [];
  let start: number | null = null;
  let waitingForReady = true;
  for (const e of [...events].sort((a, b) => a.at - b.at)) {
    if (e.to === "stopped") {
      if (start !== null) spans.push({ start, end: e.at });
      start = null;
      waitingForReady = true;
    } else if (waitingForReady && PROMISING.includes(e.to)) {
      start = e.at;
      waitingForReady = false;
    }
  }
  if (start !== null && (deletedAt === null || deletedAt > start)) spans.push({ start, end: deletedAt });
  return spans;
}
