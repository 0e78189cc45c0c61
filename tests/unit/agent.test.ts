import { mkdtempSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError, backoffMs, createClient } from "@/agent/src/client";
import { gpuTypeFromName, parseNvidiaSmi, parseXidLines } from "@/agent/src/nvidia-smi";
import { Outbox } from "@/agent/src/outbox";
import { ReplicaSupervisor } from "@/agent/src/replica-supervisor";
import { jobsOf, replicasOf, Runner, type Assignment, type ReplicaAssignment } from "@/agent/src/runner";

const fixture = (name: string) => readFileSync(path.join("agent/fixtures", name), "utf8");

describe("nvidia-smi parsing", () => {
  it("reads an H100 node, including [N/A] power", () => {
    const { gpus, skipped } = parseNvidiaSmi(fixture("h100.csv"));
    expect(skipped).toEqual([]);
    expect(gpus).toHaveLength(4);
    expect(gpus[0]).toEqual({
      index: 0,
      uuid: "GPU-a9f1c3d2-51b7-4e0f-8c3a-1f2e3d4c5b60",
      name: "NVIDIA H100 80GB HBM3",
      gpuType: "H100",
      memoryTotalMb: 81559,
      memoryUsedMb: 61234,
      utilizationPct: 97,
      temperatureC: 71,
      powerDrawW: 612.45,
      pciBusId: "18:00",
    });
    expect(gpus[3]!.powerDrawW).toBeNull();
  });

  it("reads A100 (SXM4 40 and 80 GB) with a GPU whose readings are all [N/A]", () => {
    const { gpus } = parseNvidiaSmi(fixture("a100.csv"));
    expect(gpus.map((g) => [g.gpuType, g.memoryTotalMb])).toEqual([["A100", 81920], ["A100", 81920], ["A100", 40960]]);
    expect(gpus[1]).toMatchObject({ memoryUsedMb: null, utilizationPct: null, temperatureC: null, powerDrawW: null });
  });

  it("reads H200", () => {
    const { gpus } = parseNvidiaSmi(fixture("h200.csv"));
    expect(gpus.map((g) => g.gpuType)).toEqual(["H200", "H200"]);
    expect(gpus[0]!.memoryTotalMb).toBe(143771);
  });

  it("reads L40S with [Not Supported], [Unknown Error], blank lines, an empty row and a GPU without uuid", () => {
    const { gpus, skipped } = parseNvidiaSmi(fixture("l40s.csv"));
    expect(gpus.map((g) => g.index)).toEqual([0, 1]);
    expect(gpus[1]).toMatchObject({ gpuType: "L40S", memoryUsedMb: null, temperatureC: null, utilizationPct: 12, pciBusId: null });
    expect(skipped.map((s) => s.line)).toEqual([4, 5]);
  });

  it.each([
    ["NVIDIA H100 80GB HBM3", "H100"],
    ["NVIDIA H100 PCIe", "H100"],
    ["NVIDIA A100-SXM4-80GB", "A100"],
    ["NVIDIA H200", "H200"],
    ["NVIDIA L40S", "L40S"],
    ["NVIDIA GH200 480GB", "GH200"],
    ["Tesla V100-SXM2-32GB", "V100"],
    ["NVIDIA GeForce RTX 4090", "RTX4090"],
  ])("names %s as %s", (name, type) => expect(gpuTypeFromName(name)).toBe(type));

  it("finds XIDs in the kernel log by PCI bus, matching nvidia-smi's bus ids", () => {
    expect(parseXidLines(fixture("kern.log"))).toEqual([
      { busId: "3a:00", xid: 79 },
      { busId: "18:00", xid: 13 },
      { busId: "2a:00", xid: 94 },
    ]);
    const h100 = parseNvidiaSmi(fixture("h100.csv")).gpus;
    expect(h100.find((g) => g.pciBusId === "3a:00")!.index).toBe(2);
  });
});

let server: http.Server | undefined;
afterEach(() => server?.close());

function serve(handler: (req: http.IncomingMessage, body: string) => [number, unknown]): Promise<string> {
  return new Promise((resolve) => {
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        const [status, payload] = handler(req, body);
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(payload));
      });
    });
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server!.address() as AddressInfo).port}`));
  });
}

describe("agent client and outbox", () => {
  it("retries while the control plane answers 5xx, then succeeds; never retries a 4xx", async () => {
    let calls = 0;
    const url = await serve((req) => {
      calls++;
      if (req.url === "/bad") return [400, { error: { code: "validation_failed" } }];
      return calls < 3 ? [503, {}] : [200, { ok: true }];
    });
    const client = createClient({ baseUrl: url, key: "gf_test", maxBackoffMs: 20 });
    expect(await client.call("POST", "/ok", {})).toEqual({ ok: true });
    expect(calls).toBe(3);
    await expect(client.call("POST", "/bad", {})).rejects.toBeInstanceOf(ApiError);
    expect(calls).toBe(4);
  });

  it("backs off exponentially with jitter, capped", () => {
    for (let a = 0; a < 12; a++) {
      const ms = backoffMs(a, 10_000);
      expect(ms).toBeGreaterThanOrEqual(Math.min(10_000, 250 * 2 ** a) / 2);
      expect(ms).toBeLessThanOrEqual(Math.min(10_000, 250 * 2 ** a));
    }
  });

  it("keeps exit reports on disk until the control plane has them, across restarts", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "outbox-")), "exit-reports.json");
    const outbox = new Outbox(file);
    outbox.add({ job_id: "j1", status: "completed", exit_code: 0, finished_at: "2026-01-01T00:00:00Z" });
    outbox.add({ job_id: "j2", status: "failed", exit_code: 3, finished_at: "2026-01-01T00:00:01Z" });
    outbox.add({ job_id: "j1", status: "completed", exit_code: 0, finished_at: "2026-01-01T00:00:00Z" });
    expect(outbox.pending).toHaveLength(2);

    // control plane down: nothing is lost
    const down = createClient({ baseUrl: "http://127.0.0.1:9", key: "gf_test" });
    expect(await outbox.flush(down)).toEqual({ sent: 0, kept: 2 });

    // a restarted agent finds them on disk and delivers them
    const received: Array<{ url?: string; body: unknown }> = [];
    const url = await serve((req, body) => {
      received.push({ url: req.url, body: JSON.parse(body) });
      return [200, {}];
    });
    const reopened = new Outbox(file);
    expect(reopened.pending.map((r) => r.job_id)).toEqual(["j1", "j2"]);
    expect(await reopened.flush(createClient({ baseUrl: url, key: "gf_test" }))).toEqual({ sent: 2, kept: 0 });
    expect(received).toEqual([
      { url: "/api/jobs/j1", body: { status: "completed", exit_code: 0 } },
      { url: "/api/jobs/j2", body: { status: "failed", exit_code: 3 } },
    ]);
    expect(new Outbox(file).pending).toEqual([]);
  });
});

describe("runner", () => {
  it("runs local processes on the assigned GPUs and reports their exit codes; stops work no longer assigned", async () => {
    const reports: Array<{ job_id: string; status: string; exit_code: number }> = [];
    const runner = new Runner({ gpuIndexOf: (id) => ({ a: 0, b: 1 })[id], docker: false, onExit: (r) => reports.push(r) });
    runner.reconcile([
      { job_id: "ok", gpu_ids: ["a"], command: 'test "$CUDA_VISIBLE_DEVICES" = 0' },
      { job_id: "bad", gpu_ids: ["b"], command: "exit 7" },
      { job_id: "long", gpu_ids: ["a", "b"], command: "sleep 30" },
      { job_id: "hold", gpu_ids: ["a"], duration_s: 0.05 },
    ]);
    await new Promise((r) => setTimeout(r, 800));
    runner.reconcile([{ job_id: "long", gpu_ids: ["a", "b"], command: "sleep 30" }]);
    runner.reconcile([]);
    await new Promise((r) => setTimeout(r, 200));
    expect(reports.map((r) => [r.job_id, r.status, r.exit_code]).sort()).toEqual([
      ["bad", "failed", 7],
      ["hold", "completed", 0],
      ["ok", "completed", 0],
    ]);
    expect(runner.jobIds).toEqual([]);
  });
});

describe("endpoint replicas on the node", () => {
  const replica = (id: string, gpuIds: string[]): ReplicaAssignment => ({
    kind: "endpoint_replica", replica_id: id, endpoint_id: "ep-1", endpoint_name: "chat", model: "org/model", gpu_ids: gpuIds, metrics_path: "/api/endpoints/ep-1/metrics",
  });

  it("splits a heartbeat's assignments into jobs (older servers send no kind) and replicas", () => {
    const all: Assignment[] = [{ job_id: "j1", gpu_ids: ["a"] }, { kind: "job", job_id: "j2", gpu_ids: ["b"] }, replica("r1", ["c"])];
    expect(jobsOf(all).map((j) => j.job_id)).toEqual(["j1", "j2"]);
    expect(replicasOf(all).map((r) => r.replica_id)).toEqual(["r1"]);
  });

  it("starts the serve command per replica on its GPUs with what it needs to report, and stops it when unassigned", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "gf-serve-"));
    const sup = new ReplicaSupervisor({
      serveCommand: `echo "$CUDA_VISIBLE_DEVICES|$GPUFORGE_MODEL|$GPUFORGE_REPLICA_ID|$GPUFORGE_METRICS_URL|$GPUFORGE_AGENT_KEY" > ${dir}/$GPUFORGE_REPLICA_ID.env; exec sleep 30`,
      baseUrl: "https://cp.example",
      agentKey: "gf_agentkey",
      gpuIndexOf: (id) => ({ a: 0, b: 1, c: 2 })[id],
      reportUnhealthy: async () => {},
    });
    sup.reconcile([replica("r1", ["a", "b"]), replica("r2", ["c"])]);
    await new Promise((r) => setTimeout(r, 400));
    expect(readFileSync(path.join(dir, "r1.env"), "utf8").trim()).toBe("0,1|org/model|r1|https://cp.example/api/endpoints/ep-1/metrics|gf_agentkey");
    expect(readFileSync(path.join(dir, "r2.env"), "utf8").trim()).toMatch(/^2\|/);
    sup.reconcile([replica("r2", ["c"])]);
    expect(sup.replicaIds).toEqual(["r2"]);
    sup.stopAll();
    expect(sup.replicaIds).toEqual([]);
  });

  it("reports a replica whose serving process died unhealthy, then starts it again", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "gf-serve-"));
    const reported: string[] = [];
    const sup = new ReplicaSupervisor({
      serveCommand: `echo x >> ${dir}/starts; exit 3`,
      baseUrl: "https://cp.example",
      agentKey: "gf_k",
      gpuIndexOf: () => 0,
      reportUnhealthy: async (a, reason) => void reported.push(`${a.replica_id}: ${reason}`),
      restartAfterMs: 100,
    });
    sup.reconcile([replica("r1", ["a"])]);
    await new Promise((r) => setTimeout(r, 600));
    sup.stopAll();
    expect(reported[0]).toBe("r1: serving process exited with 3");
    expect(readFileSync(path.join(dir, "starts"), "utf8").trim().split("\n").length).toBeGreaterThanOrEqual(2);
  });
});

