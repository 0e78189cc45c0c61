import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { place, type Capacity, type FreeNode, type QueuedJob } from "@/lib/scheduler/placement";

// The scheduler with Slurm clusters in the fleet: a Slurm cluster's nodes (batchOnly) take jobs
// like any other, but no pod, and a gang that needs several nodes never mixes a Slurm cluster's
// nodes with another cluster's (Slurm runs one job inside one cluster).

const node = (id: string, free: number, clusterId: string, batchOnly = false): FreeNode => ({
  nodeId: id,
  clusterId,
  gpuType: "H100",
  containers: true,
  ...(batchOnly ? { batchOnly: true } : {}),
  freeGpuIds: Array.from({ length: free }, (_, i) => `${id}-g${i}`),
});
let seq = 0;
const work = (o: Partial<QueuedJob>): QueuedJob => ({
  id: `w${String(++seq).padStart(4, "0")}`,
  tenantId: "t1",
  gpuCount: 1,
  gpuType: "H100",
  clusterId: null,
  needsContainers: true,
  priority: 5,
  submittedAt: seq,
  durationS: null,
  status: "queued",
  ...o,
});
const capacityOf = (nodes: FreeNode[]): Capacity[] =>
  nodes.map((n) => ({
    gpuType: n.gpuType,
    clusterId: n.clusterId,
    containers: n.containers,
    batchOnly: n.batchOnly,
    gpus: n.freeGpuIds.length,
  }));
const run = (nodes: FreeNode[], queue: QueuedJob[]) =>
  place({ now: 0, nodes, queue, tenants: new Map([["t1", { quota: 1000, inUse: 0 }]]), running: [], capacity: capacityOf(nodes) });

describe("placement with Slurm clusters", () => {
  it("jobs go to a Slurm cluster's nodes like any other; pods never do", () => {
    const nodes = [node("slurm-1", 8, "s", true)];
    const [jobDecision, podDecision] = run(nodes, [work({}), work({ kind: "pod", singleNode: true })]);
    expect(jobDecision).toMatchObject({ outcome: "placed", nodeIds: ["slurm-1"] });
    expect(podDecision).toMatchObject({ outcome: "pending" });
    // the pod waits for nodes that run services, and says it can never use these
    expect((podDecision as { reason: string }).reason).toMatch(/only 0 can take work/);
    const both = run([node("slurm-1", 8, "s", true), node("agent-1", 8, "a")], [work({ kind: "pod", singleNode: true, gpuCount: 2 })]);
    expect(both[0]).toMatchObject({ outcome: "placed", nodeIds: ["agent-1"] });
  });

  it("a gang stays inside one Slurm cluster, and spans clusters only among node-agent clusters", () => {
    // 12 GPUs: one Slurm cluster holds them on two nodes
    const inside = run([node("s1", 8, "s", true), node("s2", 8, "s", true), node("a1", 8, "a")], [work({ gpuCount: 12 })]);
    expect(inside[0]).toMatchObject({ outcome: "placed" });
    expect(new Set((inside[0] as { nodeIds: string[] }).nodeIds.map((n) => n[0]))).toEqual(new Set(["s"]));
    // no cluster holds 12: the two node-agent clusters do together; the Slurm node is never part of it
    const across = run([node("s1", 8, "s", true), node("a1", 8, "a"), node("b1", 8, "b")], [work({ gpuCount: 12 })]);
    expect((across[0] as { nodeIds: string[] }).nodeIds.sort()).toEqual(["a1", "b1"]);
    const never = run([node("s1", 8, "s", true), node("a1", 8, "a")], [work({ gpuCount: 12 })]);
    expect(never[0]).toMatchObject({ outcome: "pending" });
  });

  it("whatever the fleet, no placement mixes a Slurm cluster's node with another cluster's, and no pod lands on one", () => {
    const fleet = fc.array(
      fc.record({ free: fc.integer({ min: 0, max: 8 }), cluster: fc.constantFrom("s", "t", "a", "b"), containers: fc.boolean() }),
      { minLength: 1, maxLength: 10 },
    );
    const queue = fc.array(fc.record({ gpus: fc.integer({ min: 1, max: 20 }), pod: fc.boolean() }), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(fleet, queue, (ns, qs) => {
        const nodes = ns.map((n, i) => ({
          ...node(`${n.cluster}${i}`, n.free, n.cluster, n.cluster === "s" || n.cluster === "t"),
          containers: n.containers,
        }));
        const jobs = qs.map((q) =>
          work({ gpuCount: q.pod ? Math.min(q.gpus, 8) : q.gpus, ...(q.pod ? { kind: "pod", singleNode: true } : {}) }),
        );
        const byId = new Map(nodes.map((n) => [n.nodeId, n]));
        for (const d of run(nodes, jobs)) {
          if (d.outcome !== "placed") continue;
          const used = d.nodeIds.map((id) => byId.get(id)!);
          const j = jobs.find((x) => x.id === d.jobId)!;
          if (j.kind === "pod") expect(used.some((n) => n.batchOnly)).toBe(false);
          if (used.some((n) => n.batchOnly)) expect(new Set(used.map((n) => n.clusterId)).size).toBe(1);
          expect(d.gpuIds.length).toBe(j.gpuCount);
        }
      }),
    );
  });
});
