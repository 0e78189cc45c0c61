import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  capacityReport,
  chooseReservationNodes,
  earliestFit,
  type Booking,
  type Busy,
  type CapacityFacts,
  type InventoryNode,
} from "@/lib/reservations/capacity";
import { canExtend, endAction, phase, sweepStep } from "@/lib/reservations/reservation-lifecycle";
import { greedy, pickTopology, podOf, rackOf, type TopoNode } from "@/lib/scheduler/topology";

// The topology placer and what is built on it: properties over random fleets (pods, racks,
// partially busy nodes, bookings), plus the examples that pin the preferences down.

const n = (nodeId: string, pod: string | null, rack: string | null, free: number, clusterId = "c1"): TopoNode => ({
  nodeId,
  clusterId,
  pod,
  rack,
  free,
});

describe("topology placer: examples", () => {
  it("keeps a gang in one pod, on the fewest racks, the last one best fit", () => {
    const nodes = [
      n("a1", "p1", "ra", 8),
      n("a2", "p1", "ra", 8),
      n("b1", "p1", "rb", 8),
      n("b2", "p1", "rb", 4),
      n("c1", "p2", "rc", 8),
      n("c2", "p2", "rc", 8),
      n("c3", "p2", "rc", 8),
    ];
    // 12 fits in rack rb (8 + 4) exactly: one rack, rb rather than the larger ra or rc
    expect(
      pickTopology(nodes, 12)!
        .map((p) => p.node.nodeId)
        .sort(),
    ).toEqual(["b1", "b2"]);
    // 24 fits in rack rc alone: one rack beats two in pod p1
    expect(new Set(pickTopology(nodes, 24)!.map((p) => p.node.rack))).toEqual(new Set(["rc"]));
    // 30 fits in pod p1 (28? no: 28 < 30) — only across pods
    const wide = pickTopology(nodes, 30)!;
    expect(wide.reduce((s, p) => s + p.take, 0)).toBe(30);
    expect(new Set(wide.map((p) => p.node.pod)).size).toBe(2);
  });

  it("prefers one cluster; only spans clusters when allowed", () => {
    const nodes = [n("a", "p", "r", 8, "c1"), n("b", "p", "r", 8, "c2")];
    expect(pickTopology(nodes, 16, { oneCluster: true })).toBeNull();
    expect(
      pickTopology(nodes, 16)!
        .map((p) => p.node.clusterId)
        .sort(),
    ).toEqual(["c1", "c2"]);
  });

  it("never mistakes unknown locality for closeness", () => {
    expect(rackOf(n("x", null, null, 1))).not.toBe(rackOf(n("y", null, null, 1)));
    expect(podOf(n("x", null, "r1", 1))).not.toBe(podOf(n("y", null, "r2", 1)));
    expect(podOf(n("x", "p", "r1", 1))).toBe(podOf(n("y", "p", "r2", 1)));
  });

  it("greedy takes the fewest groups: the largest while none covers what is left, then the best fit", () => {
    const g = (id: string, cap: number) => ({ id, cap });
    expect(greedy([g("a", 5), g("b", 3), g("c", 9), g("d", 4)], 11).map((x) => [x.group.id, x.take])).toEqual([
      ["c", 9],
      ["b", 2],
    ]);
    expect(greedy([g("a", 5), g("b", 5)], 11)).toEqual([]);
  });
});

// ---- properties ----
const fleet = fc
  .array(
    fc.record({
      pod: fc.option(fc.constantFrom("p1", "p2", "p3"), { nil: null }),
      rack: fc.option(fc.constantFrom("r1", "r2", "r3", "r4"), { nil: null }),
      free: fc.integer({ min: 0, max: 8 }),
      cluster: fc.constantFrom("c1", "c2"),
    }),
    { minLength: 1, maxLength: 24 },
  )
  .map((xs) => xs.map((x, i) => n(`n${String(i).padStart(2, "0")}`, x.pod, x.rack, x.free, x.cluster)));

/** The fewest racks of one pod that can hold `need` (brute force over subsets, small fleets only). */
function minRacksInPod(nodes: TopoNode[], need: number): number | null {
  const byPod = new Map<string, Map<string, number>>();
  for (const x of nodes) {
    const racks = byPod.get(podOf(x)) ?? new Map<string, number>();
    racks.set(rackOf(x), (racks.get(rackOf(x)) ?? 0) + x.free);
    byPod.set(podOf(x), racks);
  }
  let best: number | null = null;
  for (const racks of byPod.values()) {
    const caps = [...racks.values()];
    for (let mask = 1; mask < 1 << caps.length; mask++) {
      const chosen = caps.filter((_, i) => mask & (1 << i));
      if (chosen.reduce((s, c) => s + c, 0) >= need && (best === null || chosen.length < best)) best = chosen.length;
    }
  }
  return best;
}

describe("topology placer: properties (with or without a salt ordering equal choices)", () => {
  it("takes exactly what is asked, never more than a node offers, never a node twice; null only when there is not enough", () => {
    fc.assert(
      fc.property(fleet, fc.integer({ min: 1, max: 60 }), fc.option(fc.string(), { nil: undefined }), (nodes, need, salt) => {
        const pick = pickTopology(nodes, need, { salt });
        const total = nodes.reduce((s, x) => s + x.free, 0);
        if (!pick) {
          expect(total).toBeLessThan(need);
          return;
        }
        expect(pick.reduce((s, p) => s + p.take, 0)).toBe(need);
        expect(new Set(pick.map((p) => p.node.nodeId)).size).toBe(pick.length);
        for (const p of pick) {
          expect(p.take).toBeGreaterThan(0);
          expect(p.take).toBeLessThanOrEqual(p.node.free);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("uses one pod whenever one pod can hold it, and then the fewest racks any pod could", () => {
    fc.assert(
      fc.property(fleet, fc.integer({ min: 1, max: 40 }), fc.option(fc.string(), { nil: undefined }), (nodes, need, salt) => {
        const pick = pickTopology(nodes, need, { salt });
        const best = minRacksInPod(nodes, need);
        if (best === null) return;
        expect(pick).not.toBeNull();
        expect(new Set(pick!.map((p) => podOf(p.node))).size).toBe(1);
        expect(new Set(pick!.map((p) => rackOf(p.node))).size).toBe(best);
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps racks whole when it can: a request one rack holds goes to the smallest such rack of its pod", () => {
    fc.assert(
      fc.property(fleet, fc.integer({ min: 1, max: 30 }), fc.option(fc.string(), { nil: undefined }), (nodes, need, salt) => {
        const pick = pickTopology(nodes, need, { salt });
        const rackCap = new Map<string, number>();
        for (const x of nodes) rackCap.set(rackOf(x), (rackCap.get(rackOf(x)) ?? 0) + x.free);
        if (![...rackCap.values()].some((c) => c >= need)) return;
        const racks = new Set(pick!.map((p) => rackOf(p.node)));
        expect(racks.size).toBe(1);
        const chosen = [...racks][0]!;
        const pod = podOf(pick![0]!.node);
        const podRacks = [...new Set(nodes.filter((x) => podOf(x) === pod).map(rackOf))];
        for (const r of podRacks) if (rackCap.get(r)! >= need) expect(rackCap.get(chosen)!).toBeLessThanOrEqual(rackCap.get(r)!);
      }),
      { numRuns: 2000 },
    );
  });
});

// ---- reservations: the placer never books across a reservation, nor over work that would still run ----
const H = 3_600_000;
const facts = fc
  .record({
    nodes: fc.array(
      fc.record({
        pod: fc.constantFrom("p1", "p2"),
        rack: fc.constantFrom("r1", "r2", "r3"),
        status: fc.constantFrom("available", "available", "available", "quarantined", "offline", "draining"),
        unhealthy: fc.boolean(),
        cluster: fc.constantFrom("c1", "c2"),
      }),
      { minLength: 1, maxLength: 16 },
    ),
    bookings: fc.array(fc.record({ node: fc.nat(15), from: fc.integer({ min: 0, max: 48 }), hours: fc.integer({ min: 1, max: 24 }) }), {
      maxLength: 12,
    }),
    work: fc.array(
      fc.record({
        node: fc.nat(15),
        gpus: fc.integer({ min: 1, max: 8 }),
        until: fc.option(fc.integer({ min: 1, max: 48 }), { nil: null }),
      }),
      { maxLength: 8 },
    ),
    window: fc.record({ from: fc.integer({ min: 0, max: 48 }), hours: fc.integer({ min: 1, max: 24 }) }),
    count: fc.integer({ min: 1, max: 6 }),
  })
  .map((x) => {
    const nodes: InventoryNode[] = x.nodes.map((v, i) => ({
      nodeId: `n${String(i).padStart(2, "0")}`,
      clusterId: v.cluster,
      clusterName: v.cluster,
      region: null,
      pod: v.pod,
      rack: `${v.pod}${v.rack}`,
      status: v.status,
      gpuType: "H100",
      gpus: 8,
      healthy: v.unhealthy ? 7 : 8,
    }));
    const id = (k: number) => nodes[k % nodes.length]!.nodeId;
    const bookings: Booking[] = x.bookings.map((b) => ({ nodeId: id(b.node), startsAt: b.from * H, endsAt: (b.from + b.hours) * H }));
    const work: Busy[] = x.work.map((w) => ({ nodeId: id(w.node), gpus: w.gpus, until: w.until === null ? null : w.until * H }));
    return {
      facts: { nodes, bookings, work } satisfies CapacityFacts,
      window: { from: x.window.from * H, to: (x.window.from + x.window.hours) * H },
      count: x.count,
    };
  });

describe("reservation placement: properties", () => {
  it("books only whole, healthy, in-service nodes of one cluster, never across another booking or over work still running", () => {
    fc.assert(
      fc.property(facts, ({ facts: f, window, count }) => {
        const chosen = chooseReservationNodes(f, window, { gpuType: "H100", count });
        if (!chosen) return;
        expect(chosen).toHaveLength(count);
        expect(new Set(chosen.map((c) => c.nodeId)).size).toBe(count);
        expect(new Set(chosen.map((c) => c.clusterId)).size).toBe(1);
        for (const c of chosen) {
          const node = f.nodes.find((x) => x.nodeId === c.nodeId)!;
          expect(node.status).toBe("available");
          expect(node.healthy).toBe(node.gpus);
          for (const b of f.bookings.filter((b) => b.nodeId === c.nodeId))
            expect(b.endsAt <= window.from || b.startsAt >= window.to).toBe(true);
          for (const w of f.work.filter((w) => w.nodeId === c.nodeId)) expect(w.until !== null && w.until <= window.from).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("refuses only when no cluster has enough free nodes, and agrees with the capacity report", () => {
    fc.assert(
      fc.property(facts, ({ facts: f, window, count }) => {
        const report = capacityReport(f, window, { gpuType: "H100" });
        const chosen = chooseReservationNodes(f, window, { gpuType: "H100", count });
        const mostInOne = Math.max(0, ...report.clusters.map((c) => c.free_nodes));
        expect(chosen !== null).toBe(mostInOne >= count);
        expect(report.free_nodes).toBe(report.clusters.reduce((s, c) => s + c.free_nodes, 0));
        for (const c of report.clusters)
          expect(c.free_nodes).toBe(c.pods.reduce((s, p) => s + p.racks.reduce((t, r) => t + r.free_nodes, 0), 0));
      }),
      { numRuns: 2000 },
    );
  });

  it("the earliest window that fits starts no earlier than asked, is as long, and really fits; none earlier among the moments capacity frees", () => {
    fc.assert(
      fc.property(facts, ({ facts: f, window, count }) => {
        const fit = earliestFit(f, window, { gpuType: "H100", count }, 200 * H);
        if (!fit) return;
        expect(fit.from).toBeGreaterThanOrEqual(window.from);
        expect(fit.to - fit.from).toBe(window.to - window.from);
        expect(chooseReservationNodes(f, fit, { gpuType: "H100", count })).not.toBeNull();
        if (fit.from > window.from) expect(chooseReservationNodes(f, window, { gpuType: "H100", count })).toBeNull();
      }),
      { numRuns: 1000 },
    );
  });
});

describe("reservation lifecycle", () => {
  const r = { status: "confirmed" as const, startsAt: 100, endsAt: 200 };
  it("cancels before the start, releases while active, refuses after the end", () => {
    expect(endAction(r, 50)).toEqual({ ok: true, kind: "cancel" });
    expect(endAction(r, 150)).toEqual({ ok: true, kind: "release" });
    expect(endAction(r, 200)).toMatchObject({ ok: false });
    expect(endAction({ ...r, status: "released" }, 150)).toMatchObject({ ok: false });
  });
  it("goes by the clock, whatever the sweep recorded", () => {
    expect([0, 100, 199, 200].map((t) => phase(r, t))).toEqual(["upcoming", "active", "active", "over"]);
    expect([50, 150, 250].map((t) => sweepStep(r, t))).toEqual([null, "start", "complete"]);
    expect(sweepStep({ ...r, status: "active" }, 150)).toBeNull();
  });
  it("extends only later, only while live, within the longest length", () => {
    expect(canExtend(r, 300, 150)).toEqual({ ok: true });
    expect(canExtend(r, 150, 120)).toMatchObject({ ok: false, code: "validation" });
    expect(canExtend(r, 300, 250)).toMatchObject({ ok: false, code: "invalid_transition" });
    expect(canExtend(r, 100 + 400 * 86_400_000, 150)).toMatchObject({ ok: false, code: "validation" });
  });
});
