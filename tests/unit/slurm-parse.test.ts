import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  fieldsOf,
  parseConfig,
  parseGresUsed,
  parseJobDetail,
  parseNodes,
  parsePartitions,
  parseQueue,
  parseSubmitted,
  placementComment,
  readPlacementComment,
  slurmDuration,
  slurmTime,
  tokenize,
} from "@/agent/src/slurm/parse";
import { readSlurmNode, parseSlurmNodeState } from "@/lib/slurm/node-state";
import { endReport, jobPhase } from "@/lib/slurm/job-state";

// The bridge's readers of Slurm's tools, on what 22.05 really printed here and on the forms of
// 23.11 and 24.05 (tests/fixtures/slurm/README.md): the same facts come out whatever the version,
// field order or extra fields, and what cannot be read is skipped, named, never guessed.

const fixture = (version: string, name: string) => readFileSync(path.join("tests/fixtures/slurm", version, name), "utf8");

describe("scontrol's one-line records", () => {
  it("splits at keys, keeps values with spaces, and a node's reason whole up to its [user@time]", () => {
    const f = fieldsOf(
      "NodeName=n1 OS=Linux 6.1.0 #1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1 (2023-09-29)  State=IDLE Reason=bad fan a=b c [root@1796158039] Extra=x",
    );
    expect(f.get("OS")).toBe("Linux 6.1.0 #1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1 (2023-09-29)");
    expect(f.get("Reason")).toBe("bad fan a=b c [root@1796158039]");
    expect(f.get("Extra")).toBe("x");
    expect(f.has("a")).toBe(false);
    expect(tokenize("JobId=1 Nodes=n1 GRES=gpu:2(IDX:0-1) Nodes=n2 GRES=gpu:2(IDX:2-3)").filter(([k]) => k === "Nodes")).toHaveLength(2);
  });

  it("reads times and limits in Slurm's forms", () => {
    expect(slurmTime("1796158039")?.toISOString()).toBe(new Date(1796158039 * 1000).toISOString());
    expect(slurmTime("2026-12-01T20:09:16")).toEqual(new Date("2026-12-01T20:09:16"));
    for (const none of ["Unknown", "None", "N/A", "(null)", "", "soon"]) expect(slurmTime(none)).toBeNull();
    expect(slurmDuration("UNLIMITED")).toBeNull();
    expect(slurmDuration("2-00:00:00")).toBe(172_800);
    expect(slurmDuration("00:30:00")).toBe(1800);
    expect(slurmDuration("30:00")).toBe(1800);
    expect(slurmDuration("60")).toBe(3600);
    expect(slurmDuration("1-12")).toBe(129_600);
    expect(slurmDuration("forever")).toBeUndefined();
  });
});

describe("nodes", () => {
  it("22.05 (recorded): states, reasons with their author and time, GRES, partitions", () => {
    const { records, skipped } = parseNodes(fixture("22.05", "scontrol-show-node.txt"));
    expect(skipped).toEqual([]);
    expect(records.map((n) => [n.name, n.state, n.partitions, n.cpus, n.cpusAlloc])).toEqual([
      ["gpu01", "MIXED", ["gpu", "debug"], 4, 1],
      ["gpu02", "MIXED+DRAIN", ["gpu"], 4, 2],
      ["gpu03", "ALLOCATED+DRAIN", ["gpu"], 2, 2],
    ]);
    const [, gpu02, gpu03] = records;
    expect(gpu02).toMatchObject({ reason: "bad fan a=b [ticket 42]", reasonBy: "root", reasonAt: new Date(1796158039 * 1000) });
    expect(gpu02!.gres).toEqual([{ type: "h100", count: 4, indices: null }]);
    expect(readSlurmNode(parseSlurmNodeState(gpu02!.state), gpu02!.reason)).toMatchObject({ condition: "drained", drainedByUs: false });
    expect(readSlurmNode(parseSlurmNodeState(gpu03!.state), gpu03!.reason)).toMatchObject({ condition: "up", drainedByUs: true });
    const down = parseNodes(fixture("22.05", "scontrol-show-node-down.txt")).records[0]!;
    expect(down).toMatchObject({ state: "DOWN+NOT_RESPONDING", reason: "Not responding", reasonBy: "root" });
    expect(readSlurmNode(parseSlurmNodeState(down.state), down.reason).condition).toBe("down");
  });

  it("23.11: new fields, fields reordered, a reason followed by other fields, two GPU types on a node", () => {
    const { records, skipped } = parseNodes(fixture("23.11", "scontrol-show-node.txt"));
    expect(skipped).toEqual([]);
    const [gpu01, gpu02, gpu03, cpu01] = records;
    expect(gpu01).toMatchObject({ state: "MIXED+PLANNED", cpus: 64, cpusAlloc: 16, memoryMb: 2_048_000, memoryAllocMb: 512_000 });
    expect(gpu01!.gres).toEqual([{ type: "h100", count: 8, indices: null }]);
    expect(gpu02).toMatchObject({ reason: "NHC: check_nv_healthmon: GPU 3 ECC errors=12", reasonBy: "slurm" });
    expect(gpu03!.gres.map((g) => [g.type, g.count])).toEqual([
      ["a100", 2],
      ["v100", 2],
    ]);
    expect(gpu03).toMatchObject({ state: "DOWN+NOT_RESPONDING", reason: "Not responding" });
    expect(cpu01!.gres).toEqual([]);
    expect(readSlurmNode(parseSlurmNodeState(gpu01!.state), null).condition).toBe("up");
  });

  it("24.05: new states and flags, and ones no Slurm has, which change nothing", () => {
    const { records } = parseNodes(fixture("24.05", "scontrol-show-node.txt"));
    const condition = (name: string) => {
      const n = records.find((r) => r.name === name)!;
      return readSlurmNode(parseSlurmNodeState(n.state), n.reason).condition;
    };
    expect(condition("gpu01")).toBe("up"); // ALLOCATED+BLOCKED
    expect(condition("gpu02")).toBe("down"); // powered down in the cloud
    expect(condition("gpu03")).toBe("maintenance");
    expect(condition("gpu04")).toBe("up"); // an unknown flag on a known base
    expect(condition("gpu05")).toBe("unknown"); // an unknown base: change nothing
  });

  it("skips lines it cannot read, naming them, and keeps the rest", () => {
    const text = [
      "NodeName=ok State=IDLE Gres=gpu:2",
      "garbage without fields",
      "NodeName=bad name State=IDLE",
      "NodeName=nostate Gres=gpu:1",
      "NodeName=evil State=IDLE;rm",
      "",
    ].join("\n");
    const r = parseNodes(text);
    expect(r.records.map((n) => n.name)).toEqual(["ok"]);
    expect(r.skipped.map((s) => s.line)).toEqual([2, 3, 4, 5]);
  });
});

describe("partitions and GPUs in use", () => {
  it("22.05 and 24.05 partitions: nodes expanded, time limits, default", () => {
    const p22 = parsePartitions(fixture("22.05", "scontrol-show-partition.txt")).records;
    expect(p22.map((p) => [p.name, p.isDefault, p.nodes, p.maxTimeS, p.state])).toEqual([
      ["gpu", true, ["gpu01", "gpu02", "gpu03"], null, "UP"],
      ["debug", false, ["gpu01"], 1800, "UP"],
    ]);
    const p24 = parsePartitions(fixture("24.05", "scontrol-show-partition.txt")).records;
    expect(p24.map((p) => [p.name, p.nodes.length, p.maxTimeS, p.state])).toEqual([
      ["gpu", 5, 172_800, "UP"],
      ["maint", 1, 14_400, "INACTIVE"],
    ]);
  });

  it("GresUsed per node, once per node although sinfo prints it per partition", () => {
    const used = parseGresUsed(fixture("22.05", "sinfo-gres-used.txt")).records;
    expect(used.map((u) => [u.node, u.used.map((g) => [g.count, g.indices])])).toEqual([
      ["gpu01", [[1, [2]]]],
      ["gpu02", [[3, [1, 2, 3]]]],
      ["gpu03", [[2, [0, 1]]]],
    ]);
    const u23 = parseGresUsed(fixture("23.11", "sinfo-gres-used.txt")).records;
    expect(u23.find((u) => u.node === "gpu03")!.used.map((g) => g.count)).toEqual([0, 0]);
    expect(u23.find((u) => u.node === "cpu01")!.used).toEqual([]);
    expect(parseGresUsed(fixture("24.05", "sinfo-gres-used.txt")).records.find((u) => u.node === "gpu04")!.used[0]!.indices).toEqual([
      0, 5,
    ]);
  });
});

describe("the queue", () => {
  it("22.05 (recorded): states, ids of heterogeneous components, TRES per node, free text last", () => {
    const { records, skipped } = parseQueue(fixture("22.05", "squeue.txt"));
    expect(skipped).toEqual([]);
    const byId = new Map(records.map((j) => [j.id, j]));
    expect(byId.get("1")).toMatchObject({ state: "COMPLETED", nodes: ["gpu01"], leader: "1" });
    expect(readPlacementComment(byId.get("1")!.comment)).toEqual({
      jobId: "3f1c0a2e-1b7d-4c55-9a0e-0c7c1d2e3f40",
      attempt: 1,
      fence: "5b0f2f8e-4a8e-4f65-9a52-0d1f3c2b7e11",
    });
    expect(byId.get("3")).toMatchObject({ comment: "sweep | trial 7", state: "RUNNING" });
    expect(byId.get("3")!.tresPerNode).toEqual([{ type: "h100", count: 2, indices: null }]);
    expect(byId.get("7")).toMatchObject({ display: "6+1", leader: "6", nodes: ["gpu02"] });
    expect(byId.get("5")).toMatchObject({ state: "CANCELLED", nodes: [], reason: "Resources" });
    const nf = parseQueue(fixture("22.05", "squeue-after-node-fail.txt")).records.find((j) => j.id === "8")!;
    expect(nf).toMatchObject({ state: "NODE_FAIL", reason: "NodeDown" });
    expect(endReport(nf.state, "0:0", nf.reason)).toMatchObject({ status: "failed" });
  });

  it("23.11 and 24.05: gres/gpu forms, new states, arrays, a pipe in a comment, an unknown state", () => {
    const q23 = parseQueue(fixture("23.11", "squeue.txt")).records;
    expect(q23.find((j) => j.id === "4812")!.nodes).toEqual(["gpu01", "gpu02"]);
    expect(q23.find((j) => j.id === "4812")!.tresPerNode).toEqual([{ type: "h100", count: 1, indices: null }]);
    expect(q23.find((j) => j.id === "4814")).toMatchObject({ comment: "lr=0.1 | run 3", startedAt: null, state: "PENDING" });
    expect(jobPhase(q23.find((j) => j.id === "4815")!.state)).toBe("ended");
    expect(jobPhase(q23.find((j) => j.id === "4816")!.state)).toBe("waiting");
    expect(q23.find((j) => j.id === "4817")!.tresPerNode).toEqual([]);
    const q24 = parseQueue(fixture("24.05", "squeue.txt")).records;
    expect(q24.filter((j) => j.leader === "90002").map((j) => j.display)).toEqual(["90002+0", "90002+1"]);
    expect(jobPhase(q24.find((j) => j.id === "90004")!.state)).toBe("waiting");
    expect(q24.find((j) => j.id === "90005")).toMatchObject({ display: "90005_7", leader: "90005" });
  });

  it("skips a line it cannot read, and says the queue was not wholly read", () => {
    const r = parseQueue("12|12|RUNNING|u|p|1|n1|gres:gpu:1|1|2|3|None|x\nnot|a|line\nabc|abc|RUNNING|u|p|1|n1||||||x\n");
    expect(r.records.map((j) => j.id)).toEqual(["12"]);
    expect(r.skipped).toHaveLength(2);
  });
});

describe("a job's own record", () => {
  it("22.05 (recorded): completed, failed, cancelled, node-failed, and a heterogeneous job", () => {
    expect(parseJobDetail(fixture("22.05", "scontrol-show-job-completed.txt"))).toMatchObject({
      state: "COMPLETED",
      exitCode: "0:0",
      comment: "gpuforge:3f1c0a2e-1b7d-4c55-9a0e-0c7c1d2e3f40:1:5b0f2f8e-4a8e-4f65-9a52-0d1f3c2b7e11",
      user: "root",
    });
    const failed = parseJobDetail(fixture("22.05", "scontrol-show-job-failed.txt"))!;
    expect(failed).toMatchObject({ state: "FAILED", exitCode: "3:0", reason: "NonZeroExitCode" });
    expect(endReport(failed.state, failed.exitCode, failed.reason)).toMatchObject({ status: "failed", exit_code: 3 });
    expect(parseJobDetail(fixture("22.05", "scontrol-show-job-cancelled.txt"))).toMatchObject({ state: "CANCELLED" });
    const nf = parseJobDetail(fixture("22.05", "scontrol-show-job-node-fail.txt"))!;
    expect(nf).toMatchObject({ state: "NODE_FAIL", startedAt: new Date(1796158042000), endedAt: new Date(1796158058000) });
    const het = parseJobDetail(fixture("22.05", "scontrol-show-job-het.txt"))!;
    expect(het).toMatchObject({ id: "6", components: 2, state: "RUNNING", endedAt: null });
    expect(parseJobDetail(fixture("22.05", "scontrol-show-job-invalid.txt"))).toBeNull();
  });

  it("23.11 and 24.05: free-text comments, new fields, OUT_OF_MEMORY and TIMEOUT", () => {
    const oom = parseJobDetail(fixture("23.11", "scontrol-show-job-oom.txt"))!;
    expect(oom).toMatchObject({ state: "OUT_OF_MEMORY", exitCode: "0:125", user: "alice" });
    expect(endReport(oom.state, oom.exitCode)).toMatchObject({ status: "failed", exit_code: 253 });
    const running = parseJobDetail(fixture("23.11", "scontrol-show-job-running.txt"))!;
    expect(running).toMatchObject({ state: "RUNNING", user: "gfbridge", stdout: "/shared/gpuforge/output/gpuforge-4812.out" });
    const timeout = parseJobDetail(fixture("24.05", "scontrol-show-job-timeout.txt"))!;
    expect(endReport(timeout.state, timeout.exitCode, timeout.reason)).toMatchObject({ status: "failed", exit_code: 143 });
  });
});

describe("the rest", () => {
  it("reads the configuration, sbatch's answer and our comment", () => {
    expect(parseConfig(fixture("22.05", "scontrol-show-config.txt"))).toEqual({
      clusterName: "hpc",
      version: "22.05.8",
      minJobAgeS: 300,
      slurmdTimeoutS: 5,
      selectType: "select/cons_tres",
      accountingStorage: "accounting_storage/none",
    });
    expect(parseConfig(fixture("24.05", "scontrol-show-config.txt"))).toMatchObject({ clusterName: "frontier-lab", version: "24.05.3" });
    expect(parseSubmitted("4812\n")).toBe("4812");
    expect(parseSubmitted("4812;frontier\n")).toBe("4812");
    expect(parseSubmitted("sbatch: error: nope")).toBeNull();
    const c = placementComment("3f1c0a2e-1b7d-4c55-9a0e-0c7c1d2e3f40", 12, "5b0f2f8e-4a8e-4f65-9a52-0d1f3c2b7e11");
    expect(readPlacementComment(c)).toMatchObject({ attempt: 12 });
    for (const bad of ["gpuforge:x:1:y", "gpuforge:3f1c0a2e-1b7d-4c55-9a0e-0c7c1d2e3f40:1", null, "(null)"])
      expect(readPlacementComment(bad)).toBeNull();
  });
});
