import "server-only";
import { Gauge, Registry } from "prom-client";
import { pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { env } from "@/lib/env";
import {
  GAUGE_GPUS,
  GAUGE_NODES,
  GAUGE_OUTBOX,
  GAUGE_PER_GPU,
  GAUGE_QUEUE,
  GAUGE_REMEDIATIONS,
  GAUGE_ROLLUP_QUEUE,
  GAUGE_RUNNING,
} from "./statements";

// The fleet as the database says it is now, read once per scrape (at most every few seconds,
// however many scrapers ask): GPUs and nodes by state, per-GPU health and utilization, the queue
// by priority, the remediation cap, the notification outbox. Every app process serves the same
// figures; scrape one (through the load balancer) or aggregate them with max(). Labels take values
// from bounded sets (cluster names, GPU types, statuses, priorities 1–10, hostnames and GPU
// indexes); per-GPU series stop at METRICS_MAX_GPU_SERIES, and a gauge says when they did.

const CACHE_MS = 5_000;

interface Snapshot {
  gpus: Array<{ cluster: string; gpu_type: string; state: string; n: number }>;
  nodes: Array<{ cluster: string; status: string; n: number }>;
  perGpu: Array<{ cluster: string; node: string; gpu: number; gpu_type: string; healthy: boolean; util: number | null }>;
  perGpuTruncated: boolean;
  queue: Array<{ priority: number; status: string; n: number; oldest_s: number }>;
  remediations: { used: number; cap: number; window_s: number };
  outbox: Array<{ status: string; n: number; oldest_s: number }>;
  running: Array<{ kind: string; n: number }>;
  rollupQueue: { n: number; oldest_s: number };
}

let cached: { at: number; cap: number; snapshot: Promise<Snapshot> } | undefined;

async function readSnapshot(cap: number): Promise<Snapshot> {
  const windowS = env().REMEDIATION_WINDOW_S;
  const [gpus, nodes, perGpu, queue, [rem], outbox, running, [rollupQueue]] = await Promise.all([
    run(pool(), GAUGE_GPUS),
    run(pool(), GAUGE_NODES),
    run(pool(), GAUGE_PER_GPU, [cap + 1]),
    run(pool(), GAUGE_QUEUE),
    run(pool(), GAUGE_REMEDIATIONS, [windowS]),
    run(pool(), GAUGE_OUTBOX),
    run(pool(), GAUGE_RUNNING),
    run(pool(), GAUGE_ROLLUP_QUEUE),
  ]);
  return {
    gpus,
    nodes,
    perGpu: perGpu.slice(0, cap),
    perGpuTruncated: perGpu.length > cap,
    queue,
    remediations: { used: rem?.used ?? 0, cap: env().REMEDIATION_CAP, window_s: windowS },
    outbox,
    running,
    rollupQueue: rollupQueue ?? { n: 0, oldest_s: 0 },
  };
}

function snapshot(cap: number): Promise<Snapshot> {
  const now = Date.now();
  if (!cached || now - cached.at > CACHE_MS || cached.cap !== cap) {
    cached = { at: now, cap, snapshot: readSnapshot(cap) };
    cached.snapshot.catch(() => (cached = undefined));
  }
  return cached.snapshot;
}

/** A registry of the fleet's gauges, filled from one snapshot per scrape window. */
export async function fleetRegistry(opts: { maxGpuSeries?: number; fresh?: boolean } = {}): Promise<Registry> {
  if (opts.fresh) cached = undefined;
  const s = await snapshot(opts.maxGpuSeries ?? env().METRICS_MAX_GPU_SERIES);
  const registry = new Registry();
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Gauge<L>({ name, help, labelNames, registers: [registry] });
  const gpus = gauge("gpuforge_gpus", "GPUs by cluster, type and state (idle, allocated, unhealthy, missing)", [
    "cluster",
    "gpu_type",
    "state",
  ] as const);
  for (const r of s.gpus) gpus.set({ cluster: r.cluster, gpu_type: r.gpu_type, state: r.state }, r.n);
  const nodes = gauge("gpuforge_nodes", "Nodes by cluster and lifecycle status", ["cluster", "status"] as const);
  for (const r of s.nodes) nodes.set({ cluster: r.cluster, status: r.status }, r.n);
  const healthy = gauge("gpuforge_gpu_healthy", "1 when the GPU is healthy, 0 when it is marked unhealthy", [
    "cluster",
    "node",
    "gpu",
    "gpu_type",
  ] as const);
  const util = gauge(
    "gpuforge_gpu_utilization_percent",
    "The GPU's mean utilization over its latest reported minute (absent when silent for 5 minutes)",
    ["cluster", "node", "gpu", "gpu_type"] as const,
  );
  for (const r of s.perGpu) {
    const labels = { cluster: r.cluster, node: r.node, gpu: String(r.gpu), gpu_type: r.gpu_type };
    healthy.set(labels, r.healthy ? 1 : 0);
    if (r.util !== null) util.set(labels, Math.round(Number(r.util) * 10) / 10);
  }
  gauge("gpuforge_gpu_series_truncated", "1 when the fleet has more GPUs than METRICS_MAX_GPU_SERIES and per-GPU series were cut").set(
    s.perGpuTruncated ? 1 : 0,
  );
  const waiting = gauge("gpuforge_jobs_waiting", "Waiting jobs by priority (1 highest) and status (queued, blocked)", [
    "priority",
    "status",
  ] as const);
  const oldest = gauge("gpuforge_jobs_oldest_wait_seconds", "How long the oldest waiting job of each priority and status has waited", [
    "priority",
    "status",
  ] as const);
  for (const r of s.queue) {
    waiting.set({ priority: String(r.priority), status: r.status }, r.n);
    oldest.set({ priority: String(r.priority), status: r.status }, Math.round(r.oldest_s));
  }
  const running = gauge("gpuforge_work_running", "Running jobs and live endpoint replicas", ["kind"] as const);
  for (const r of s.running) running.set({ kind: r.kind }, r.n);
  gauge("gpuforge_remediations_in_window", "Automatic quarantines inside the current blast-radius window").set(s.remediations.used);
  gauge("gpuforge_remediation_cap", "Automatic quarantines allowed per window").set(s.remediations.cap);
  gauge("gpuforge_remediation_window_seconds", "The blast-radius window").set(s.remediations.window_s);
  const outbox = gauge("gpuforge_notifications_backlog", "Notifications waiting to be delivered (pending) or given up (failed)", [
    "status",
  ] as const);
  const outboxAge = gauge("gpuforge_notifications_oldest_seconds", "Age of the oldest notification in each state", ["status"] as const);
  for (const st of ["pending", "failed"]) {
    const r = s.outbox.find((x) => x.status === st);
    outbox.set({ status: st }, r?.n ?? 0);
    outboxAge.set({ status: st }, Math.round(r?.oldest_s ?? 0));
  }
  gauge("gpuforge_metrics_rollup_queue", "Ingest statements whose samples are stored but not yet in the per-minute rollups").set(
    s.rollupQueue.n,
  );
  gauge(
    "gpuforge_metrics_rollup_queue_oldest_seconds",
    "How long the oldest of them has waited (the rollups' delay; folds run every few seconds)",
  ).set(Math.round(s.rollupQueue.oldest_s));
  return registry;
}
