import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError, backoffMs, createClient } from "@/agent/src/client";
import { parseOsRelease } from "@/agent/src/node-info";
import { gpuTypeFromName, parseNvidiaSmi, parseRemappedRows, parseSmiHeader, parseXidLines } from "@/agent/src/nvidia-smi";
import { Outbox, type ExitReport } from "@/agent/src/outbox";
import { tempDir } from "../support/temp-dir";

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
      driverVersion: "550.90.07",
      eccEnabled: true,
      eccUncorrected: 0,
    });
    expect(gpus[3]!.powerDrawW).toBeNull();
    // uncorrected ECC errors since the driver loaded: what the heartbeat reports as ecc_uncorrected
    expect(gpus.map((g) => g.eccUncorrected)).toEqual([0, 0, 2, 0]);
  });

  it("reads ECC off (L40S: Disabled, errors [N/A]) as unknown, not as zero errors", () => {
    const { gpus } = parseNvidiaSmi(fixture("l40s.csv"));
    expect(gpus.map((g) => [g.eccEnabled, g.eccUncorrected, g.driverVersion])).toEqual([
      [false, null, "550.54.15"],
      [false, null, "550.54.15"],
    ]);
  });

  it("reads an older driver's output without the signal fields (the agent's fallback query)", () => {
    const { gpus, skipped } = parseNvidiaSmi(fixture("v100-old-driver.csv"));
    expect(skipped).toEqual([]);
    expect(gpus.map((g) => [g.gpuType, g.memoryTotalMb, g.driverVersion, g.eccEnabled, g.eccUncorrected])).toEqual([
      ["V100", 32510, null, null, null],
      ["V100", 32510, null, null, null],
    ]);
  });

  it("reads row-remapping failures per GPU; [N/A] (before Ampere) is unknown", () => {
    expect([...parseRemappedRows(fixture("remapped-h100.csv"))]).toEqual([
      ["GPU-a9f1c3d2-51b7-4e0f-8c3a-1f2e3d4c5b60", false],
      ["GPU-b8e2d4c3-62c8-4f1a-9d4b-2a3b4c5d6e71", false],
      ["GPU-c7d3e5f4-73d9-4a2b-8e5c-3b4c5d6e7f82", true],
    ]);
    expect(parseRemappedRows(fixture("remapped-v100.csv")).size).toBe(0);
    expect([...parseRemappedRows("GPU-x, Yes\nGPU-y, No\n")]).toEqual([
      ["GPU-x", true],
      ["GPU-y", false],
    ]);
  });

  it("reads the driver and CUDA versions from nvidia-smi's header, and the OS from os-release", () => {
    expect(parseSmiHeader(fixture("nvidia-smi-header.txt"))).toEqual({ driverVersion: "560.35.03", cudaVersion: "12.6" });
    expect(parseSmiHeader("no GPUs here")).toEqual({ driverVersion: null, cudaVersion: null });
    expect(parseOsRelease('NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\nID=ubuntu\n')).toBe("Ubuntu 22.04.4 LTS");
    expect(parseOsRelease("PRETTY_NAME=Debian GNU/Linux 12 (bookworm)\n")).toBe("Debian GNU/Linux 12 (bookworm)");
    expect(parseOsRelease("ID=alpine\n")).toBeNull();
  });

  it("reads A100 (SXM4 40 and 80 GB) with a GPU whose readings are all [N/A]", () => {
    const { gpus } = parseNvidiaSmi(fixture("a100.csv"));
    expect(gpus.map((g) => [g.gpuType, g.memoryTotalMb])).toEqual([
      ["A100", 81920],
      ["A100", 81920],
      ["A100", 40960],
    ]);
    expect(gpus[1]).toMatchObject({
      memoryUsedMb: null,
      utilizationPct: null,
      temperatureC: null,
      powerDrawW: null,
      eccEnabled: null,
      eccUncorrected: null,
    });
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

  it("keeps exit reports on disk until the control plane has them, across restarts, naming their placement", async () => {
    const file = path.join(tempDir("outbox-"), "exit-reports.json");
    const outbox = new Outbox(file);
    const report = (job: string, o: Partial<ExitReport> = {}): ExitReport => ({
      key: `job:${job}:1:f-${job}`,
      job_id: job,
      attempt: 1,
      fence: `f-${job}`,
      status: "completed",
      exit_code: 0,
      finished_at: "2026-01-01T00:00:00Z",
      ...o,
    });
    outbox.add(report("j1"));
    outbox.add(report("j2", { status: "failed", exit_code: 3 }));
    outbox.add(report("j1"));
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
      { url: "/api/jobs/j1", body: { status: "completed", exit_code: 0, attempt: 1, fence: "f-j1" } },
      { url: "/api/jobs/j2", body: { status: "failed", exit_code: 3, attempt: 1, fence: "f-j2" } },
    ]);
    expect(new Outbox(file).pending).toEqual([]);
  });

  it("drops a report the control plane calls stale (409) or unknown (404), and keeps going", async () => {
    const outbox = new Outbox(path.join(tempDir("outbox-"), "exit-reports.json"));
    for (const job of ["stale", "gone", "ok"])
      outbox.add({ key: job, job_id: job, attempt: 2, fence: job, status: "completed", exit_code: 0, finished_at: "2026-01-01T00:00:00Z" });
    const url = await serve((req) =>
      req.url === "/api/jobs/stale"
        ? [409, { error: { code: "stale_report" } }]
        : req.url === "/api/jobs/gone"
          ? [404, { error: { code: "not_found" } }]
          : [200, {}],
    );
    expect(await outbox.flush(createClient({ baseUrl: url, key: "gf_test" }))).toEqual({ sent: 1, kept: 0 });
  });
});
