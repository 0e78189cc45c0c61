// The GPUForge node agent: `npm run agent` on a GPU node.
//   GPUFORGE_URL          control plane, e.g. https://gpuforge.example.com
//   GPUFORGE_AGENT_KEY    the cluster's agent key (gf_…)
//   GPUFORGE_INGEST_URL   optional: heartbeats and metrics go to this ingest server (`npm run ingest`)
//   GPUFORGE_HOSTNAME     defaults to the machine's hostname; GPUFORGE_POD, GPUFORGE_RACK optional
//   HEARTBEAT_INTERVAL_S  default 15;  METRICS_INTERVAL_S default 10
//   AGENT_STATE_DIR       where unsent exit reports wait (default ~/.gpuforge-agent)
//   NVIDIA_SMI            path to nvidia-smi (default: found on PATH)
//   GPUFORGE_SERVE_COMMAND optional: started once per endpoint replica assigned here (see replica-supervisor.ts)
import { execFile } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { createClient } from "./client";
import { NVIDIA_SMI_ARGS, normaliseBusId, parseNvidiaSmi, parseXidLines, type GpuReading } from "./nvidia-smi";
import { Outbox } from "./outbox";
import { ReplicaSupervisor } from "./replica-supervisor";
import { dockerAvailable, jobsOf, replicasOf, Runner, type Assignment } from "./runner";

const run = promisify(execFile);
const env = process.env;
const log = (m: string) => process.stderr.write(`${new Date().toISOString()} agent: ${m}\n`);

function required(name: string): string {
  const v = env[name];
  if (!v) {
    log(`${name} is not set`);
    process.exit(2);
  }
  return v;
}

async function readGpus(): Promise<GpuReading[]> {
  const { stdout } = await run(env.NVIDIA_SMI ?? "nvidia-smi", NVIDIA_SMI_ARGS, { timeout: 20_000 });
  const { gpus, skipped } = parseNvidiaSmi(stdout);
  for (const s of skipped) log(`nvidia-smi line ${s.line} skipped: ${s.reason}`);
  return gpus;
}

/** XIDs the kernel logged since the last look (best effort: needs journalctl and permission). */
async function readXids(sinceS: number): Promise<Array<{ busId: string; xid: number }>> {
  try {
    const { stdout } = await run("journalctl", ["-k", "-o", "cat", "--no-pager", `--since=-${sinceS}s`], { timeout: 10_000 });
    return parseXidLines(stdout);
  } catch {
    return [];
  }
}

async function main() {
  const client = createClient({ baseUrl: required("GPUFORGE_URL").replace(/\/$/, ""), key: required("GPUFORGE_AGENT_KEY"), retryForMs: Infinity, log });
  // heartbeats and metrics may go to a dedicated ingest server (`npm run ingest`); the rest to the app
  const hot = env.GPUFORGE_INGEST_URL ? createClient({ baseUrl: env.GPUFORGE_INGEST_URL.replace(/\/$/, ""), key: required("GPUFORGE_AGENT_KEY"), retryForMs: Infinity, log }) : client;
  const hostname = env.GPUFORGE_HOSTNAME ?? os.hostname();
  const heartbeatS = Number(env.HEARTBEAT_INTERVAL_S ?? 15);
  const metricsS = Number(env.METRICS_INTERVAL_S ?? 10);
  const outbox = new Outbox(path.join(env.AGENT_STATE_DIR ?? path.join(os.homedir(), ".gpuforge-agent"), "exit-reports.json"));

  let gpus = await readGpus();
  const registration = await client.call<{ node: { id: string }; gpus: Array<{ id: string; uuid: string; index: number }> }>("POST", "/api/clusters/nodes", {
    hostname,
    pod: env.GPUFORGE_POD,
    rack: env.GPUFORGE_RACK,
    cpu_cores: os.cpus().length,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    agent_version: "0.1.0",
    gpus: gpus.map((g) => ({ uuid: g.uuid, index: g.index, gpu_type: g.gpuType, model: g.name, memory_total_mb: g.memoryTotalMb })),
  });
  const nodeId = registration.node.id;
  const indexById = new Map(registration.gpus.map((g) => [g.id, g.index]));
  log(`registered ${hostname} as node ${nodeId} with ${gpus.length} GPU(s)`);

  const runner = new Runner({ gpuIndexOf: (id) => indexById.get(id), docker: dockerAvailable(), onExit: (r) => outbox.add(r), log });
  const replicas = new ReplicaSupervisor({
    serveCommand: env.GPUFORGE_SERVE_COMMAND,
    baseUrl: required("GPUFORGE_URL").replace(/\/$/, ""),
    agentKey: required("GPUFORGE_AGENT_KEY"),
    gpuIndexOf: (id) => indexById.get(id),
    reportUnhealthy: (a) =>
      client.call("POST", a.metrics_path, { samples: [{ replica_id: a.replica_id, requests: 0, errors: 0, p50_ms: 0, p95_ms: 0, p99_ms: 0, healthy: false }] }, 60_000).then(() => {}),
    log,
  });
  let stopping = false;

  const heartbeat = async () => {
    const xids = await readXids(heartbeatS * 2);
    const byBus = new Map<string, number[]>();
    for (const x of xids) byBus.set(x.busId, [...(byBus.get(x.busId) ?? []), x.xid]);
    const reply = await hot.call<{ assignments: Assignment[] }>("POST", `/api/clusters/nodes/${nodeId}/heartbeat`, {
      gpus: gpus.map((g) => ({
        uuid: g.uuid,
        healthy: g.temperatureC !== null || g.utilizationPct !== null,
        ...(g.pciBusId && byBus.get(normaliseBusId(g.pciBusId)) ? { xid_errors: byBus.get(normaliseBusId(g.pciBusId)) } : {}),
      })),
    });
    runner.reconcile(jobsOf(reply.assignments));
    replicas.reconcile(replicasOf(reply.assignments));
    await outbox.flush(client);
  };

  const metrics = async () => {
    gpus = await readGpus();
    const at = new Date().toISOString();
    await hot.call("POST", "/api/clusters/metrics", {
      metrics: gpus.map((g) => ({
        gpu_uuid: g.uuid,
        recorded_at: at,
        utilization_pct: g.utilizationPct ?? 0,
        memory_used_mb: g.memoryUsedMb ?? 0,
        memory_total_mb: g.memoryTotalMb,
        temperature_c: g.temperatureC ?? 0,
        power_draw_w: g.powerDrawW ?? 0,
      })),
    });
  };

  const loop = async (fn: () => Promise<void>, seconds: number, name: string) => {
    while (!stopping) {
      await fn().catch((e: unknown) => log(`${name} failed: ${(e as Error).message}`));
      await new Promise((r) => setTimeout(r, seconds * 1000));
    }
  };
  const shutdown = () => {
    stopping = true;
    runner.stopAll();
    replicas.stopAll();
    log("stopping");
    setTimeout(() => process.exit(0), 500);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
  await Promise.all([loop(heartbeat, heartbeatS, "heartbeat"), loop(metrics, metricsS, "metrics")]);
}

main().catch((e: unknown) => {
  log((e as Error).message);
  process.exit(1);
});
