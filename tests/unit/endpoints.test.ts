import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { createEndpointBody, endpointMetricsBody, timeWindowQuery, updateEndpointBody } from "@/lib/endpoints/schemas";
import { zodIssuesToDetails } from "@/lib/http/error-response";
import { decideScale, type ScalePolicy } from "@/lib/endpoints/autoscaler";
import {
  canTransition,
  ENDPOINT_STATUSES,
  FAILED_AFTER_S,
  nextEndpointStatus,
  transitionPath,
  type EndpointObservation,
  type EndpointStatus,
} from "@/lib/endpoints/endpoint-lifecycle";
import { placeReplicas } from "@/lib/endpoints/replica-placement";
import {
  classifyMinute,
  computeSla,
  errorBudget,
  servingSpans,
  slaTimeline,
  type MinuteBucket,
  type ObservedMinute,
} from "@/lib/endpoints/sla";

// Every (from, to) pair of the endpoint state machine, written out: true = allowed.
const TABLE: Record<EndpointStatus, Record<EndpointStatus, boolean>> = {
  provisioning: { provisioning: false, ready: true, degraded: false, scaling: true, stopped: true, failed: true },
  ready: { provisioning: false, ready: false, degraded: true, scaling: true, stopped: true, failed: false },
  scaling: { provisioning: false, ready: true, degraded: true, scaling: false, stopped: true, failed: true },
  degraded: { provisioning: false, ready: true, degraded: false, scaling: true, stopped: true, failed: true },
  failed: { provisioning: true, ready: true, degraded: true, scaling: false, stopped: true, failed: false },
  stopped: { provisioning: true, ready: false, degraded: false, scaling: false, stopped: false, failed: false },
};

describe("endpoint state machine", () => {
  for (const from of ENDPOINT_STATUSES) {
    for (const to of ENDPOINT_STATUSES) {
      it(`${from} → ${to} is ${TABLE[from][to] ? "allowed" : "refused"}`, () => expect(canTransition(from, to)).toBe(TABLE[from][to]));
    }
  }

  it("finds a path through allowed moves (a stopped endpoint reaches ready through provisioning)", () => {
    expect(transitionPath("stopped", "ready")).toEqual(["provisioning", "ready"]);
    expect(transitionPath("ready", "ready")).toEqual([]);
    expect(transitionPath("ready", "failed")).toEqual(["scaling", "failed"]);
    for (const from of ENDPOINT_STATUSES)
      for (const to of ENDPOINT_STATUSES) {
        const path = transitionPath(from, to);
        let at = from;
        for (const step of path) {
          expect(canTransition(at, step)).toBe(true);
          at = step;
        }
        expect(at).toBe(to);
      }
  });

  const obs = (o: Partial<EndpointObservation>): EndpointObservation => ({
    status: "provisioning",
    stopRequested: false,
    desired: 2,
    live: 2,
    ready: 0,
    unhealthy: 0,
    everReady: false,
    scaling: false,
    withoutReadySince: 0,
    now: 1_000,
    ...o,
  });

  it("derives each status from what the replicas do", () => {
    expect(nextEndpointStatus(obs({ stopRequested: true, status: "ready" })).status).toBe("stopped");
    expect(nextEndpointStatus(obs({ status: "stopped" })).status).toBe("provisioning");
    expect(nextEndpointStatus(obs({ ready: 2 })).status).toBe("ready");
    expect(nextEndpointStatus(obs({ ready: 1 })).status).toBe("provisioning");
    expect(nextEndpointStatus(obs({ ready: 1, everReady: true, scaling: true, live: 2, desired: 3, status: "ready" })).status).toBe(
      "scaling",
    );
    // capacity lost (no scaling asked): degraded; an unhealthy replica while scaling: degraded too
    expect(nextEndpointStatus(obs({ ready: 1, live: 1, everReady: true, status: "ready" })).status).toBe("degraded");
    expect(nextEndpointStatus(obs({ ready: 1, unhealthy: 1, everReady: true, scaling: true, status: "scaling" })).status).toBe("degraded");
    // more live than desired (scaling down not finished) is not ready yet
    expect(nextEndpointStatus(obs({ ready: 3, live: 3, desired: 2, everReady: true, scaling: true, status: "ready" })).status).toBe(
      "scaling",
    );
  });

  it("fails only after FAILED_AFTER_S without a ready replica, and says why", () => {
    const start = 0;
    expect(nextEndpointStatus(obs({ live: 0, withoutReadySince: start, now: (FAILED_AFTER_S - 1) * 1000 })).status).toBe("provisioning");
    const failed = nextEndpointStatus(obs({ live: 0, withoutReadySince: start, now: FAILED_AFTER_S * 1000 }));
    expect(failed).toMatchObject({ status: "failed", reason: expect.stringContaining("could be placed") });
    expect(nextEndpointStatus(obs({ live: 2, withoutReadySince: start, now: FAILED_AFTER_S * 1000 })).reason).toContain("became ready");
    // a failed endpoint that gets a ready replica recovers
    expect(nextEndpointStatus(obs({ status: "failed", ready: 2, withoutReadySince: null })).status).toBe("ready");
  });
});

describe("replica placement", () => {
  const nodes = [
    { nodeId: "a", freeGpuIds: ["a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"] },
    { nodeId: "b", freeGpuIds: ["b0", "b1", "b2"] },
    { nodeId: "c", freeGpuIds: ["c0", "c1", "c2", "c3"] },
  ];

  it("spreads replicas over distinct nodes first, best fit among them", () => {
    const p = placeReplicas({ need: 3, gpusPerReplica: 2, nodes, occupiedNodeIds: [], quotaLeft: 100 });
    expect(p.map((x) => x.nodeId)).toEqual(["b", "c", "a"]);
    expect(p[0]!.gpuIds).toEqual(["b0", "b1"]);
  });

  it("doubles up only when every fitting node already has one; never splits a replica across nodes", () => {
    expect(placeReplicas({ need: 1, gpusPerReplica: 4, nodes, occupiedNodeIds: ["c"], quotaLeft: 100 }).map((x) => x.nodeId)).toEqual([
      "a",
    ]);
    const p = placeReplicas({ need: 3, gpusPerReplica: 4, nodes, occupiedNodeIds: ["c"], quotaLeft: 100 });
    expect(p.map((x) => x.nodeId)).toEqual(["a", "a", "c"]);
    expect(p.every((x) => x.gpuIds.length === 4 && x.gpuIds.every((g) => g.startsWith(x.nodeId)))).toBe(true);
  });

  it("stops at the quota and never hands out a GPU twice", () => {
    expect(placeReplicas({ need: 4, gpusPerReplica: 2, nodes, occupiedNodeIds: [], quotaLeft: 5 })).toHaveLength(2);
    const all = placeReplicas({ need: 10, gpusPerReplica: 1, nodes, occupiedNodeIds: [], quotaLeft: 100 }).flatMap((x) => x.gpuIds);
    expect(new Set(all).size).toBe(all.length);
    expect(all).toHaveLength(10);
  });
});

describe("autoscaler", () => {
  const policy: ScalePolicy = { metric: "requests_per_replica", target: 10, min: 1, max: 5, cooldownS: 300 };
  const base = { policy, desired: 2, requestsPerS: 20, p95Ms: null, lastScaledAt: null, now: 1_000_000 };

  it("tracks requests per replica within min/max, holding inside the 10 % band", () => {
    expect(decideScale({ ...base, requestsPerS: 21 })).toMatchObject({ outcome: "held", blocked: false });
    expect(decideScale({ ...base, requestsPerS: 45 })).toMatchObject({ outcome: "scale_up", to: 5 });
    expect(decideScale({ ...base, requestsPerS: 400 })).toMatchObject({ outcome: "scale_up", to: 5 });
    expect(decideScale({ ...base, requestsPerS: 3 })).toMatchObject({ outcome: "scale_down", to: 1 });
    expect(decideScale({ ...base, desired: 5, requestsPerS: 400 })).toMatchObject({
      outcome: "held",
      blocked: true,
      reason: expect.stringContaining("max is 5"),
    });
    expect(decideScale({ ...base, policy: { ...policy, min: 2 }, requestsPerS: 3 })).toMatchObject({
      outcome: "held",
      blocked: true,
      reason: expect.stringContaining("min is 2"),
    });
    // already at what the load needs: a plain hold, not a refusal to log
    expect(decideScale({ ...base, desired: 1, requestsPerS: 0.8 })).toMatchObject({ outcome: "held", blocked: false });
  });

  it("waits a quarter cool-down (≥ 30 s) to scale up and the whole cool-down to scale down", () => {
    expect(decideScale({ ...base, requestsPerS: 45, lastScaledAt: base.now - 60_000 })).toMatchObject({ outcome: "held", blocked: true });
    expect(decideScale({ ...base, requestsPerS: 45, lastScaledAt: base.now - 75_000 })).toMatchObject({ outcome: "scale_up" });
    expect(decideScale({ ...base, requestsPerS: 3, lastScaledAt: base.now - 299_000 })).toMatchObject({
      outcome: "held",
      reason: expect.stringContaining("cool-down"),
    });
    expect(decideScale({ ...base, requestsPerS: 3, lastScaledAt: base.now - 300_000 })).toMatchObject({ outcome: "scale_down" });
    const short = { ...policy, cooldownS: 60 };
    expect(decideScale({ ...base, policy: short, requestsPerS: 45, lastScaledAt: base.now - 29_000 })).toMatchObject({ outcome: "held" });
    expect(decideScale({ ...base, policy: short, requestsPerS: 45, lastScaledAt: base.now - 30_000 })).toMatchObject({
      outcome: "scale_up",
    });
  });

  it("steps one replica at a time on p95, and holds without data or when off", () => {
    const p95 = { ...policy, metric: "p95_ms" as const, target: 500 };
    expect(decideScale({ ...base, policy: p95, p95Ms: 700 })).toMatchObject({ outcome: "scale_up", to: 3 });
    expect(decideScale({ ...base, policy: p95, p95Ms: 540 })).toMatchObject({ outcome: "held" });
    expect(decideScale({ ...base, policy: p95, p95Ms: 200 })).toMatchObject({ outcome: "scale_down", to: 1 });
    expect(decideScale({ ...base, policy: p95, p95Ms: null })).toMatchObject({
      outcome: "held",
      reason: expect.stringContaining("no latency"),
    });
    expect(decideScale({ ...base, requestsPerS: null })).toMatchObject({ outcome: "held", reason: expect.stringContaining("no traffic") });
    expect(decideScale({ ...base, policy: { ...policy, metric: "none", target: null } })).toMatchObject({
      outcome: "held",
      reason: "autoscaling off",
    });
  });
});

describe("SLA arithmetic", () => {
  const M = 60_000;
  const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);
  const minute = (i: number, o: Partial<MinuteBucket> = {}): MinuteBucket => ({
    bucket: T0 + i * M,
    samples: 6,
    unhealthySamples: 0,
    requests: 600,
    errors: 0,
    p95Ms: 300,
    ...o,
  });
  const seen = (i: number, minReady = 1): ObservedMinute => ({ bucket: T0 + i * M, minReady });
  const full = (n: number) => Array.from({ length: n }, (_, i) => minute(i));
  const watched = (n: number, minReady = 1) => Array.from({ length: n }, (_, i) => seen(i, minReady));
  const targets = { p95Ms: 400, availabilityPct: 99 };
  const always = [{ start: T0 - 3_600_000, end: null }];
  const hour = (buckets: MinuteBucket[], observed: ObservedMinute[] = watched(60)) =>
    computeSla({ from: T0, to: T0 + 60 * M, now: T0 + 61 * M, serving: always, buckets, observed, targets });

  it("a clean hour is 100 % available with the whole error budget left", () => {
    const r = hour(full(60));
    expect(r).toMatchObject({
      minutes_expected: 60,
      minutes_available: 60,
      minutes_down: 0,
      minutes_no_data: 0,
      availability_pct: 100,
      p95_compliance_pct: 100,
      requests: 36_000,
      errors: 0,
      success_rate_pct: 100,
    });
    expect(r.compliant).toEqual({ availability: true, p95: true });
    expect(r.error_budget).toEqual({
      allowed_minutes: 0.6,
      used_minutes: 0,
      remaining_minutes: 0.6,
      remaining_pct: 100,
      overspent_minutes: 0,
    });
  });

  it("idle minutes (no samples while a ready replica was seen all minute) are available", () => {
    // traffic only in the first ten minutes; the replica stayed ready the whole hour
    const r = hour(full(10));
    expect(r).toMatchObject({
      minutes_expected: 60,
      minutes_available: 60,
      minutes_idle: 50,
      minutes_down: 0,
      availability_pct: 100,
      minutes_with_traffic: 10,
    });
    expect(r.compliant.availability).toBe(true);
    expect(classifyMinute(undefined, seen(0, 2))).toBe("idle");
  });

  it("silent minutes (no samples and no ready replica seen) are down", () => {
    const observed = watched(60).map((o, i) => (i >= 50 ? { ...o, minReady: 0 } : o));
    const r = hour(full(50), observed);
    expect(r).toMatchObject({ minutes_expected: 60, minutes_available: 50, minutes_down: 10, minutes_idle: 0 });
    expect(r.availability_pct).toBeCloseTo(83.333, 3);
    expect(classifyMinute(undefined, seen(0, 0))).toBe("silent");
  });

  it("failing minutes (only unhealthy samples, or ≥ 5 % errors) are down even while replicas look ready", () => {
    const b = full(60);
    b[20] = minute(20, { errors: 30 });
    b[30] = minute(30, { errors: 29 });
    b[40] = minute(40, { unhealthySamples: 6 });
    b[41] = minute(41, { unhealthySamples: 5 });
    const r = hour(b);
    expect(r).toMatchObject({ minutes_available: 58, minutes_down: 2 });
    expect(classifyMinute(b[20], seen(20))).toBe("errors");
    expect(classifyMinute(b[40], seen(40))).toBe("failing");
    expect(classifyMinute(b[30], seen(30))).toBe("up");
    expect(classifyMinute(b[41], seen(41))).toBe("up");
  });

  it("after a minute nobody observed, a minute without samples and without a ready replica is not yet down", () => {
    // the control plane was away for minutes 10–19; at 20 it marks the replica stale (no ready), samples resume at 21
    const observed = watched(60)
      .filter((_, i) => i < 10 || i >= 20)
      .map((o) => (o.bucket === T0 + 20 * M ? { ...o, minReady: 0 } : o));
    const b = full(60).filter((_, i) => i < 10 || i >= 21);
    const r = hour(b, observed);
    expect(r).toMatchObject({ minutes_no_data: 11, minutes_down: 0, availability_pct: 100 });
    expect(classifyMinute(undefined, seen(20, 0), false)).toBe("no_data");
    // a second silent minute in a row is down: the replica had a full minute to report
    const longer = hour(
      full(60).filter((_, i) => i < 10 || i >= 22),
      observed.map((o) => (o.bucket === T0 + 21 * M ? { ...o, minReady: 0 } : o)),
    );
    expect(longer).toMatchObject({ minutes_no_data: 11, minutes_down: 1 });
  });

  it("minutes nobody observed are no data: neither up nor down, reported apart", () => {
    // the control plane was off for 22 minutes (the demo stopped and started again)
    const observed = watched(60).filter((_, i) => i < 10 || i >= 32);
    const b = full(60).filter((_, i) => i < 10 || i >= 32);
    const r = hour(b, observed);
    expect(r).toMatchObject({
      minutes_expected: 38,
      minutes_available: 38,
      minutes_no_data: 22,
      availability_pct: 100,
      compliant: { availability: true },
    });
    expect(classifyMinute(undefined, undefined)).toBe("no_data");
  });

  it("clamps an overspent budget at 0 % left and says by how much it was overspent", () => {
    const observed = watched(60).map((o, i) => (i >= 57 ? { ...o, minReady: 0 } : o));
    const r = hour(full(57), observed);
    expect(r.error_budget).toEqual({
      allowed_minutes: 0.6,
      used_minutes: 3,
      remaining_minutes: 0,
      remaining_pct: 0,
      overspent_minutes: 2.4,
    });
    expect(r.compliant.availability).toBe(false);
    // the budget runs out exactly where availability falls below its target
    for (const down of [0, 0.3, 0.6, 0.9]) {
      const budget = errorBudget(99, 60, down);
      expect(budget.overspent_minutes > 0).toBe((100 * (60 - down)) / 60 < 99);
      expect(budget.remaining_pct).toBeGreaterThanOrEqual(0);
    }
  });

  it("counts partial edge minutes by their overlap, and nothing after now", () => {
    const r = computeSla({
      from: T0 + 30_000,
      to: T0 + 2 * M + 15_000,
      now: T0 + 10 * M,
      serving: always,
      buckets: [minute(0), minute(2)],
      observed: [seen(0), seen(1, 0), seen(2)],
      targets,
    });
    expect(r.minutes_expected).toBeCloseTo(1.75, 3);
    expect(r.minutes_available).toBeCloseTo(0.75, 3);
    const future = computeSla({
      from: T0,
      to: T0 + 60 * M,
      now: T0 + 30 * M,
      serving: always,
      buckets: full(60),
      observed: watched(60),
      targets,
    });
    expect(future.minutes_expected).toBe(30);
    expect(future.to).toBe(new Date(T0 + 30 * M).toISOString());
  });

  it("promised time starts at the first ready, ends when stopped, starts again at the next ready", () => {
    const spans = servingSpans(null, [
      { at: T0 + 5 * M, from: null, to: "provisioning" },
      { at: T0 + 10 * M, from: "provisioning", to: "ready" },
      { at: T0 + 12 * M, from: "ready", to: "degraded" },
      { at: T0 + 20 * M, from: "degraded", to: "stopped" },
      { at: T0 + 40 * M, from: "stopped", to: "provisioning" },
      { at: T0 + 43 * M, from: "provisioning", to: "ready" },
    ]);
    expect(spans).toEqual([
      { start: T0 + 10 * M, end: T0 + 20 * M },
      { start: T0 + 43 * M, end: null },
    ]);
    const r = computeSla({
      from: T0,
      to: T0 + 60 * M,
      now: T0 + 60 * M,
      serving: spans,
      buckets: full(60),
      observed: watched(60),
      targets,
    });
    expect(r.minutes_expected).toBe(27);
    // deleted while provisioning: it never promised anything
    expect(
      servingSpans(T0 + 9 * M, [
        { at: T0, from: null, to: "provisioning" },
        { at: T0 + 9 * M, from: "provisioning", to: "stopped" },
      ]),
    ).toEqual([]);
  });

  it("a brand-new endpoint (provisioning, or just created) has no figures yet rather than 0 %", () => {
    const spans = servingSpans(null, [{ at: T0 + 58 * M, from: null, to: "provisioning" }]);
    const r = computeSla({
      from: T0,
      to: T0 + 60 * M,
      now: T0 + 60 * M,
      serving: spans,
      buckets: [],
      observed: [seen(58, 0), seen(59, 0)],
      targets,
    });
    expect(r).toMatchObject({
      minutes_expected: 0,
      availability_pct: null,
      p95_compliance_pct: null,
      compliant: { availability: null, p95: null },
    });
    expect(r.error_budget).toMatchObject({ allowed_minutes: 0, remaining_pct: null, overspent_minutes: 0 });
  });

  it("cuts the window into slots telling up, idle, down and no-data minutes apart", () => {
    const observed = watched(60)
      .filter((_, i) => i < 40)
      .map((o, i) => (i >= 30 ? { ...o, minReady: 0 } : o));
    const slots = slaTimeline(
      { from: T0, to: T0 + 60 * M, now: T0 + 60 * M, serving: always, buckets: full(20), observed, targets },
      15 * M,
    );
    expect(slots).toEqual([
      { start: new Date(T0).toISOString(), up: 15, idle: 0, down: 0, no_data: 0 },
      { start: new Date(T0 + 15 * M).toISOString(), up: 5, idle: 10, down: 0, no_data: 0 },
      { start: new Date(T0 + 30 * M).toISOString(), up: 0, idle: 0, down: 10, no_data: 5 },
      { start: new Date(T0 + 45 * M).toISOString(), up: 0, idle: 0, down: 0, no_data: 15 },
    ]);
  });

  it("p95 compliance counts minutes with traffic only, and needs 95 % of them", () => {
    const b = full(20).map((x, i) => (i < 2 ? { ...x, p95Ms: 900 } : i < 4 ? { ...x, requests: 0 } : x));
    const r = computeSla({ from: T0, to: T0 + 20 * M, now: T0 + 20 * M, serving: always, buckets: b, observed: watched(20), targets });
    expect(r.minutes_with_traffic).toBe(18);
    expect(r.p95_compliance_pct).toBeCloseTo((100 * 16) / 18, 3);
    expect(r.compliant.p95).toBe(false);
    expect(r.p95_worst_ms).toBe(900);
    const noTargets = computeSla({
      from: T0,
      to: T0 + 20 * M,
      now: T0 + 20 * M,
      serving: always,
      buckets: b,
      observed: watched(20),
      targets: { p95Ms: null, availabilityPct: null },
    });
    expect(noTargets).toMatchObject({ p95_compliance_pct: null, error_budget: null, compliant: { availability: null, p95: null } });
    expect(noTargets.latency_budget).toBeNull();
  });

  it("the latency objective has a budget of its own: 5 % of the minutes with traffic may be slow, and a fully available hour can overspend it", () => {
    // 20 minutes with traffic, every one up, two slow: availability met, latency missed
    const b = full(20).map((x, i) => (i < 2 ? { ...x, p95Ms: 900 } : x));
    const r = computeSla({ from: T0, to: T0 + 20 * M, now: T0 + 20 * M, serving: always, buckets: b, observed: watched(20), targets });
    expect(r.compliant).toEqual({ availability: true, p95: false });
    expect(r.error_budget).toMatchObject({ used_minutes: 0, remaining_pct: 100, overspent_minutes: 0 });
    expect(r.latency_budget).toEqual({ allowed_minutes: 1, used_minutes: 2, remaining_minutes: 0, remaining_pct: 0, overspent_minutes: 1 });
    // within budget: one slow minute of twenty is exactly the 5 % allowed
    const one = computeSla({
      from: T0,
      to: T0 + 20 * M,
      now: T0 + 20 * M,
      serving: always,
      buckets: full(20).map((x, i) => (i === 0 ? { ...x, p95Ms: 900 } : x)),
      observed: watched(20),
      targets,
    });
    expect(one.compliant.p95).toBe(true);
    expect(one.latency_budget).toMatchObject({ used_minutes: 1, remaining_minutes: 0, overspent_minutes: 0 });
  });

  it("a young endpoint's figures start where it first served, not at the window's start", () => {
    const started = T0 + 57 * M + 20_000;
    const r = computeSla({
      from: T0 - 23 * 60 * M,
      to: T0 + 60 * M,
      now: T0 + 60 * M,
      serving: [{ start: started, end: null }],
      buckets: [minute(57), minute(58), minute(59)],
      observed: [seen(57), seen(58), seen(59)],
      targets,
    });
    expect(r.served_from).toBe(new Date(started).toISOString());
    expect(r.minutes_expected).toBeCloseTo(2 + 40 / 60, 3);
    const always24 = computeSla({
      from: T0,
      to: T0 + 60 * M,
      now: T0 + 60 * M,
      serving: always,
      buckets: full(60),
      observed: watched(60),
      targets,
    });
    expect(always24.served_from).toBe(new Date(T0).toISOString());
    const never = computeSla({ from: T0, to: T0 + 60 * M, now: T0 + 60 * M, serving: [], buckets: [], observed: [], targets });
    expect(never.served_from).toBeNull();
  });
});

describe("endpoint request validation (the API's 400s name each field)", () => {
  const paths = (r: { success: boolean; error?: { issues: z.core.$ZodIssue[] } }) =>
    r.success ? [] : zodIssuesToDetails(r.error!.issues, "body").map((d) => d.path);
  const sample = { requests: 10, errors: 1, p50_ms: 50, p95_ms: 120, p99_ms: 200 };
  const create = { name: "chat", model: "org/model", gpu_type: "H100", gpus_per_replica: 1, replicas: 2 };

  it("refuses samples whose errors exceed requests or whose percentiles are out of order, by index", () => {
    expect(paths(endpointMetricsBody.safeParse({ samples: [sample] }))).toEqual([]);
    expect(
      paths(
        endpointMetricsBody.safeParse({
          samples: [sample, { ...sample, errors: 11 }, { ...sample, p50_ms: 130 }, { ...sample, p99_ms: 100 }],
        }),
      ),
    ).toEqual(["samples[1].errors", "samples[2].p50_ms", "samples[3].p95_ms"]);
    expect(paths(endpointMetricsBody.safeParse({ samples: [] }))).toEqual(["samples"]);
    expect(paths(endpointMetricsBody.safeParse({ samples: [{ ...sample, replica_id: "r1", requests: -1 }] }))).toEqual([
      "samples[0].replica_id",
      "samples[0].requests",
      "samples[0].errors",
    ]);
  });

  it("refuses bounds around replicas, a target without a metric and a metric without a target", () => {
    expect(paths(createEndpointBody.safeParse(create))).toEqual([]);
    expect(paths(createEndpointBody.safeParse({ ...create, min_replicas: 3 }))).toEqual(["min_replicas"]);
    expect(paths(createEndpointBody.safeParse({ ...create, max_replicas: 1 }))).toEqual(["max_replicas"]);
    expect(paths(createEndpointBody.safeParse({ ...create, autoscale_metric: "p95_ms" }))).toEqual(["autoscale_target"]);
    expect(paths(createEndpointBody.safeParse({ ...create, autoscale_target: 5 }))).toEqual(["autoscale_target"]);
    expect(paths(createEndpointBody.safeParse({ ...create, name: "Chat Bot", sla_availability_pct: 100 }))).toEqual([
      "name",
      "sla_availability_pct",
    ]);
    expect(paths(updateEndpointBody.safeParse({}))).toEqual(["body"]);
  });

  it("refuses windows that end before they start or span over 92 days", () => {
    expect(paths(timeWindowQuery.safeParse({ from: "2026-11-02T00:00:00Z", to: "2026-11-01T00:00:00Z" }))).toEqual(["to"]);
    expect(paths(timeWindowQuery.safeParse({ from: "2026-01-01T00:00:00Z", to: "2026-11-01T00:00:00Z" }))).toEqual(["from"]);
    expect(paths(timeWindowQuery.safeParse({ from: "yesterday" }))).toEqual(["from"]);
  });
});
