/**
 * Autoscaling decisions (pure). Target tracking within [min, max]:
 * - requests_per_replica: replicas = ceil(requests per second / target), held while the load per
 *   replica is within 10 % of the target (no flapping on noise);
 * - p95_ms: one replica more when p95 is over the target by more than 10 %, one fewer when it is
 *   under half the target (latency is not linear in replicas, so it moves a step at a time).
 * Scaling up waits a quarter of the cool-down since the last change (at least 30 s); scaling down
 * waits the whole cool-down, so a short dip does not shed capacity a burst will need again.
 */
export const AUTOSCALE_METRICS = ["none", "requests_per_replica", "p95_ms"] as const;
export type AutoscaleMetric = (typeof AUTOSCALE_METRICS)[number];

const TOLERANCE = 0.1;

export interface ScalePolicy {
  metric: AutoscaleMetric;
  target: number | null;
  min: number;
  max: number;
  cooldownS: number;
}

export interface ScaleInput {
  policy: ScalePolicy;
  desired: number;
  /** requests per second over the observation window, across the endpoint */
  requestsPerS: number | null;
  /** request-weighted p95 over the observation window */
  p95Ms: number | null;
  lastScaledAt: number | null;
  now: number;
}

const replicas = (n: number) => `${n} replica${n === 1 ? "" : "s"}`;

export const SCALE_OUTCOMES = ["scale_up", "scale_down", "held"] as const;

export type ScaleDecision =
  | { outcome: "scale_up" | "scale_down"; to: number; observed: number; reason: string }
  | { outcome: "held"; to: number; observed: number | null; reason: string; blocked: boolean };

export function decideScale(i: ScaleInput): ScaleDecision {
  const { policy: p, desired } = i;
  const hold = (reason: string, observed: number | null, blocked = false): ScaleDecision => ({
    outcome: "held",
    to: desired,
    observed,
    reason,
    blocked,
  });
  if (p.metric === "none" || p.target === null) return hold("autoscaling off", null);

  let wanted: number;
  let observed: number;
  if (p.metric === "requests_per_replica") {
    if (i.requestsPerS === null) return hold("no traffic figures yet", null);
    observed = i.requestsPerS / Math.max(desired, 1);
    if (Math.abs(observed / p.target - 1) <= TOLERANCE) return hold("load per replica within 10 % of the target", observed);
    wanted = Math.max(1, Math.ceil(i.requestsPerS / p.target - 1e-9));
  } else {
    if (i.p95Ms === null) return hold("no latency figures yet", null);
    observed = i.p95Ms;
    if (observed > p.target * (1 + TOLERANCE)) wanted = desired + 1;
    else if (observed < p.target / 2) wanted = desired - 1;
    else return hold("p95 within the target band", observed);
  }

  if (wanted === desired) return hold(`${replicas(desired)} is what the load needs`, observed);
  const clamped = Math.min(p.max, Math.max(p.min, wanted));
  if (clamped === desired) {
    return hold(
      wanted > desired ? `wants ${replicas(wanted)} but max is ${p.max}` : `wants ${replicas(wanted)} but min is ${p.min}`,
      observed,
      true,
    );
  }
  const up = clamped > desired;
  const waitS = up ? Math.max(30, p.cooldownS / 4) : p.cooldownS;
  if (i.lastScaledAt !== null && i.now - i.lastScaledAt < waitS * 1000) {
    const leftS = Math.ceil(waitS - (i.now - i.lastScaledAt) / 1000);
    return hold(`wants ${replicas(clamped)}; cool-down has ${leftS} s left`, observed, true);
  }
  const what =
    p.metric === "requests_per_replica"
      ? `${observed.toFixed(1)} req/s per replica vs target ${p.target}`
      : `p95 ${observed.toFixed(0)} ms vs target ${p.target} ms`;
  return { outcome: up ? "scale_up" : "scale_down", to: clamped, observed, reason: `${what}: ${desired} → ${clamped}` };
}
