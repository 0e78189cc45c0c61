import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { accountNameFor, ACCOUNT_PATTERN, disambiguatedAccountName } from "@/lib/slurm/account-name";
import { EXHAUSTED_LABEL, planForeignHolds, type GpuSlot } from "@/lib/slurm/foreign-holds";
import { gpuCount, parseGpuGres } from "@/lib/slurm/gres";
import { compressHostlist, expandHostlist, HostlistError } from "@/lib/slurm/hostlist";
import { endReport, exitCodeOf, jobPhase, normaliseJobState } from "@/lib/slurm/job-state";
import {
  choosePartition,
  componentArgs,
  planSubmission,
  timeLimitMinutes,
  type ChosenNode,
  type PartitionFacts,
} from "@/lib/slurm/submission";

describe("Slurm job states", () => {
  it.each([
    ["PENDING", "waiting"],
    ["CONFIGURING", "waiting"],
    ["REQUEUE_HOLD", "waiting"],
    ["RESV_DEL_HOLD", "waiting"],
    ["RUNNING", "running"],
    ["COMPLETING", "running"],
    ["SUSPENDED", "running"],
    ["STAGE_OUT", "running"],
    ["COMPLETED", "ended"],
    ["FAILED", "ended"],
    ["TIMEOUT", "ended"],
    ["CANCELLED", "ended"],
    ["CANCELLED by 0", "ended"],
    ["NODE_FAIL", "ended"],
    ["PREEMPTED", "ended"],
    ["OUT_OF_MEMORY", "ended"],
    ["BOOT_FAIL", "ended"],
    ["DEADLINE", "ended"],
    ["running", "running"],
    ["QUANTUM_ENTANGLED", "unknown"],
    ["", "unknown"],
  ])("%s is %s", (state, phase) => {
    expect(jobPhase(state)).toBe(phase);
  });

  it("reads code:signal exit codes", () => {
    expect(exitCodeOf("0:0")).toBe(0);
    expect(exitCodeOf("3:0")).toBe(3);
    expect(exitCodeOf("0:9")).toBe(137);
    expect(exitCodeOf("0:15")).toBe(143);
    expect(exitCodeOf("garbage")).toBeNull();
    expect(exitCodeOf(null)).toBeNull();
  });

  it("reports each ending as GPUForge knows them: a failure spends a retry, preemption does not", () => {
    expect(endReport("COMPLETED", "0:0")).toEqual({ status: "completed", exit_code: 0 });
    expect(endReport("FAILED", "3:0", "NonZeroExitCode")).toMatchObject({
      status: "failed",
      exit_code: 3,
      error: "Slurm: FAILED (NonZeroExitCode)",
    });
    expect(endReport("TIMEOUT", "0:15")).toMatchObject({ status: "failed", exit_code: 143, error: expect.stringContaining("time limit") });
    expect(endReport("NODE_FAIL", "0:0", "NodeDown")).toMatchObject({ status: "failed", error: expect.stringContaining("NODE_FAIL") });
    expect(endReport("CANCELLED by 1000", "0:15")).toMatchObject({ status: "failed", error: expect.stringContaining("outside GPUForge") });
    expect(endReport("OUT_OF_MEMORY", "0:125")).toMatchObject({ status: "failed" });
    for (const s of ["PREEMPTED", "BOOT_FAIL", "REVOKED", "LAUNCH_FAILED", "SOMETHING_NEW"])
      expect(endReport(s, "0:0").status).toBe("interrupted");
    expect(normaliseJobState("  cancelled+  ")).toBe("CANCELLED");
  });
});

describe("host lists", () => {
  it("expands and compresses Slurm's forms", () => {
    expect(expandHostlist("n1")).toEqual(["n1"]);
    expect(expandHostlist("n[1-3],login1")).toEqual(["n1", "n2", "n3", "login1"]);
    expect(expandHostlist("gpu[01-03,07]")).toEqual(["gpu01", "gpu02", "gpu03", "gpu07"]);
    expect(expandHostlist("rack[1-2]-n[1-2]")).toEqual(["rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"]);
    expect(expandHostlist("(null)")).toEqual([]);
    expect(compressHostlist(["n1", "n2", "n3", "n5"])).toBe("n[1-3,5]");
    expect(compressHostlist(["gpu01", "gpu02", "login"])).toBe("gpu[01-02],login");
    expect(compressHostlist(["a"])).toBe("a");
  });

  it("refuses malformed and enormous lists instead of building them", () => {
    for (const bad of ["n[1-", "n]1[", "n[a-b]", "n[5-1]", "n[1-99999999]"]) expect(() => expandHostlist(bad), bad).toThrow(HostlistError);
    expect(() => expandHostlist("a[1-400]-b[1-400]", 1000)).toThrow(HostlistError);
  });

  it("round-trips any set of numbered hosts", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 40 }), (ns) => {
        const hosts = ns.map((n) => `node${n}`);
        expect(new Set(expandHostlist(compressHostlist(hosts)))).toEqual(new Set(hosts));
      }),
    );
  });
});

describe("GRES", () => {
  it("reads the forms of 22.05 and of 23.02 and later", () => {
    expect(parseGpuGres("gpu:h100:8(S:0-1)")).toEqual([{ type: "h100", count: 8, indices: null }]);
    expect(parseGpuGres("gpu:4")).toEqual([{ type: null, count: 4, indices: null }]);
    expect(parseGpuGres("gpu:h100:2(IDX:0-1)")).toEqual([{ type: "h100", count: 2, indices: [0, 1] }]);
    expect(parseGpuGres("gpu:h100:0(IDX:N/A)")).toEqual([{ type: "h100", count: 0, indices: [] }]);
    expect(parseGpuGres("gpu:a100:1(IDX:0),gpu:v100:2(IDX:2-3)")).toEqual([
      { type: "a100", count: 1, indices: [0] },
      { type: "v100", count: 2, indices: [2, 3] },
    ]);
    expect(parseGpuGres("gres:gpu:h100:1")).toEqual([{ type: "h100", count: 1, indices: null }]);
    expect(parseGpuGres("gres/gpu:h100:1")).toEqual([{ type: "h100", count: 1, indices: null }]);
    expect(parseGpuGres("cpu=2,mem=1000M,gres/gpu=2")).toEqual([{ type: null, count: 2, indices: null }]);
    expect(parseGpuGres("gres/gpu:a100=4")).toEqual([{ type: "a100", count: 4, indices: null }]);
    expect(parseGpuGres("gpu:h100:2(IDX:0,3)")[0]!.indices).toEqual([0, 3]);
    expect(gpuCount("gpu:a100:2,mps:100,gpu:v100:2,shard:8")).toBe(4);
  });

  it("skips what it cannot read", () => {
    for (const bad of ["(null)", "N/A", "", "gpu:h100:lots", "gpu:h100:99999", "nic:2", "gpu:bad type:2"])
      expect(gpuCount(bad), bad).toBe(0);
  });
});

describe("submission plans", () => {
  const part = (name: string, nodes: string[], o: Partial<PartitionFacts> = {}): PartitionFacts => ({
    name,
    state: "UP",
    isDefault: false,
    nodes,
    maxTimeS: null,
    ...o,
  });
  const node = (name: string, gpus: number, o: Partial<ChosenNode> = {}): ChosenNode => ({
    name,
    gpus,
    gresType: "h100",
    cpus: 64,
    memoryMb: 512_000,
    gpusTotal: 8,
    ...o,
  });

  it("rounds the time limit up to whole minutes", () => {
    expect(timeLimitMinutes(1)).toBe(1);
    expect(timeLimitMinutes(60)).toBe(1);
    expect(timeLimitMinutes(61)).toBe(2);
  });

  it("chooses an up partition that holds every node and allows the time, the default first", () => {
    const ps = [
      part("debug", ["n1"], { maxTimeS: 3600 }),
      part("gpu", ["n1", "n2"], { isDefault: true }),
      part("long", ["n1", "n2"], { maxTimeS: 7 * 86400 }),
      part("down", ["n1", "n2"], { state: "DOWN" }),
    ];
    expect(choosePartition(ps, ["n1"], 600)?.name).toBe("gpu");
    expect(choosePartition(ps, ["n1"], 600, ["debug", "long"])?.name).toBe("debug");
    expect(choosePartition(ps, ["n1"], 7200, ["debug", "long"])?.name).toBe("long");
    expect(choosePartition(ps, ["n1"], null, ["debug", "long"])).toBeNull();
    expect(choosePartition(ps, ["n3"], 60)).toBeNull();
  });

  it("an even split is one job; an uneven one a heterogeneous job, exactly the chosen GPUs on each node", () => {
    const ps = [part("gpu", ["n1", "n2", "n3"], { isDefault: true })];
    const even = planSubmission([node("n1", 8), node("n2", 8)], ps, 3600);
    expect(even).toEqual({
      ok: true,
      components: [{ partition: "gpu", nodes: ["n1", "n2"], gpusPerNode: 8, gresType: "h100", cpusPerGpu: 8, memPerGpuMb: 64_000 }],
    });
    if (!even.ok) throw new Error("plan");
    expect(componentArgs(even.components[0]!, 3600)).toEqual([
      "--partition=gpu",
      "--nodelist=n[1-2]",
      "--nodes=2",
      "--ntasks-per-node=1",
      "--gres=gpu:h100:8",
      "--cpus-per-gpu=8",
      "--mem-per-gpu=64000M",
      "--time=60",
    ]);
    const uneven = planSubmission([node("n1", 8), node("n2", 2), node("n3", 8)], ps, null);
    expect(uneven.ok && uneven.components.map((c) => [c.nodes, c.gpusPerNode])).toEqual([
      [["n1", "n3"], 8],
      [["n2"], 2],
    ]);
  });

  it("splits across partitions when none holds all the nodes, and says why when a node has none", () => {
    const ps = [part("a", ["n1"]), part("b", ["n2"])];
    const plan = planSubmission([node("n1", 4), node("n2", 4)], ps, 60);
    expect(plan.ok && plan.components.map((c) => c.partition).sort()).toEqual(["a", "b"]);
    const none = planSubmission([node("n9", 1)], ps, 60);
    expect(none).toMatchObject({ ok: false, reason: expect.stringContaining("n9") });
  });

  it("asks no memory of a node whose memory Slurm does not know, and no GRES type of an untyped one", () => {
    const plan = planSubmission([node("n1", 1, { memoryMb: 1, gresType: null })], [part("p", ["n1"])], 60);
    if (!plan.ok) throw new Error("plan");
    const args = componentArgs(plan.components[0]!, 60);
    expect(args).toContain("--gres=gpu:1");
    expect(args.some((a) => a.startsWith("--mem-per-gpu"))).toBe(false);
  });
});

describe("foreign holds", () => {
  const slots = (n: number, allocated: number[] = [], holders: Record<number, string> = {}): GpuSlot[] =>
    Array.from({ length: n }, (_, i) => ({ id: `g${i}`, index: i, allocated: allocated.includes(i), holder: holders[i] ?? null }));

  it("marks the GPUs a foreign job holds, at Slurm's own indices where GPUForge's work does not hold them", () => {
    const plan = planForeignHolds(slots(4), [{ label: "Slurm job 7 (alice)", gpus: 2, indices: [2, 3] }]);
    expect(plan.changes).toEqual([
      { id: "g2", holder: "Slurm job 7 (alice)" },
      { id: "g3", holder: "Slurm job 7 (alice)" },
    ]);
    // index 0 is GPUForge's: another free GPU stands in for it
    const moved = planForeignHolds(slots(4, [0]), [{ label: "j", gpus: 2, indices: [0, 1] }]);
    expect(moved.changes.map((c) => c.id).sort()).toEqual(["g1", "g2"]);
    expect(moved.unplaced).toBe(0);
  });

  it("counts what it could not place, keeps stable marks, and frees what foreign work left", () => {
    const over = planForeignHolds(slots(2, [0, 1]), [{ label: "j", gpus: 1 }]);
    expect(over).toEqual({ changes: [], unplaced: 1, held: 0 });
    const stable = planForeignHolds(slots(4, [], { 3: "j" }), [{ label: "j", gpus: 1 }]);
    expect(stable.changes).toEqual([]);
    const freed = planForeignHolds(slots(2, [], { 0: "j", 1: "k" }), [{ label: "k", gpus: 1 }]);
    expect(freed.changes).toEqual([{ id: "g0", holder: null }]);
  });

  it("holds every free GPU of a node without CPUs or memory left", () => {
    const plan = planForeignHolds(slots(3, [0]), [], true);
    expect(plan.changes).toEqual([
      { id: "g1", holder: EXHAUSTED_LABEL },
      { id: "g2", holder: EXHAUSTED_LABEL },
    ]);
  });

  it("never marks a GPU GPUForge's work holds, whatever the load", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 8 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 7 })),
        fc.array(fc.record({ label: fc.constantFrom("a", "b", "c"), gpus: fc.integer({ min: 0, max: 9 }) }), { maxLength: 4 }),
        fc.boolean(),
        (n, allocated, load, full) => {
          const gpus = slots(n, allocated);
          const plan = planForeignHolds(gpus, load, full);
          for (const c of plan.changes) expect(gpus.find((g) => g.id === c.id)!.allocated).toBe(false);
          const free = gpus.filter((g) => !g.allocated).length;
          expect(plan.held).toBeLessThanOrEqual(free);
          expect(plan.held + plan.unplaced).toBeGreaterThanOrEqual(
            Math.min(
              free,
              load.reduce((s, j) => s + j.gpus, 0),
            ),
          );
        },
      ),
    );
  });
});

describe("Slurm accounts", () => {
  it("names each tenant's account readably, within Slurm's rules", () => {
    expect(accountNameFor("Acme Research")).toBe("gf-acme-research");
    expect(accountNameFor("Zürich AI Lab GmbH")).toBe("gf-zurich-ai-lab-gmbh");
    expect(accountNameFor("!!!")).toBe("gf-tenant");
    expect(disambiguatedAccountName("Acme Research", "3f1c0a2e-1b7d-4c55-9a0e-0c7c1d2e3f40")).toBe("gf-acme-research-3f1c0a2e");
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.uuid(), (name, id) => {
        expect(accountNameFor(name)).toMatch(ACCOUNT_PATTERN);
        expect(disambiguatedAccountName(name, id)).toMatch(ACCOUNT_PATTERN);
      }),
    );
  });
});
