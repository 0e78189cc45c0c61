// The fleet simulator: N virtual nodes × 8 GPUs that behave like real agents and speak only the
// HTTP API. Each node declares that it runs containers and simulates them: assigned work runs for
// its duration_s, prints plausible training output (shipped through the same log spool as the real
// agent), and is reported, fenced, through the same durable outbox; like the real agent it starts a
// placement at most once. Utilization, temperature and power follow what runs on each GPU; faults
// (XID 79, overheating, a node going silent) are injected on request. Endpoint replicas assigned to
// a node "load their model" for a few seconds and then serve simulated traffic: a slow wave of
// requests per endpoint shared by its replicas, latency rising with each replica's load, posted to
// the endpoint's metrics route (with the replica's fence) like a real serving sidecar. Every replica
// is also served by a small real HTTP model server (agent/src/model-server.ts: OpenAI-style
// completions, streaming, configurable latency and error rate, /health while loaded) listening on
// its node's own address (each simulated node has a loopback address of its own, 127.x.y.z), at a
// port the node reports like a real agent reports the host port it published — so the inference
// gateway, its probes and the SLA work end to end. Pods assigned to a node "run": their ports are
// real listeners on the node's address (an SSH banner on 22, a small page on the others), reported
// running with their host ports, and stopped when the control plane takes them away. Simulated
// job containers post outputs with their placement's token before they exit, as real workloads do.
//
// `npm run simulator -- --keys .data/demo-agent-keys.json` (cluster id → agent key), with a control
// endpoint on 127.0.0.1:$SIM_CONTROL_PORT: POST /faults {"hostname", "kind": "xid79"|"overheat"|"silent"|"clear", "gpu_index"?}.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import net from "node:net";
import { placementKey, type JobAssignment, type PodAssignment } from "../../lib/fleet/assignments";
import { createClient, type Client } from "./client";
import { LogSpool } from "./log-spool";
import { startModelServer, type ModelServer } from "./model-server";
import { Outbox } from "./outbox";
import { jobsOf, podsOf, replicasOf, type Assignment, type ReplicaAssignment } from "./runner";

export interface SimCluster {
  clusterId: string;
  key: string;
  gpuType: string;
  memoryMb: number;
  tdpW: number;
  pods: number;
  racksPerPod: number;
  nodesPerRack: number;
}

export type FaultKind = "xid79" | "overheat" | "silent" | "clear";

interface SimGpu {
  index: number;
  uuid: string;
  id?: string;
  util: number;
  jobId?: string;
  xidPending?: number;
  overheat?: boolean;
}

interface SimNode {
  hostname: string;
  /** its own loopback address: what it registers, where its replicas' and pods' ports listen */
  address: string;
  pod: string;
  rack: string;
  cluster: SimCluster;
  client: Client;
  id?: string;
  gpus: SimGpu[];
  silent: boolean;
  /** running placements by key */
  jobs: Map<string, { assignment: JobAssignment; timers: NodeJS.Timeout[] }>;
  /** every placement this node ever started, until the control plane stops assigning it and has its report */
  started: Set<string>;
  replicas: Map<string, { assignment: ReplicaAssignment; servingFrom: number; server?: ModelServer; announced?: boolean; closed?: boolean }>;
  /** pods running here, by placement key */
  pods: Map<string, { assignment: PodAssignment; listeners: net.Server[]; ports: Array<{ container_port: number; host_port: number }>; reported: boolean }>;
}

/** Seconds a simulated replica takes to load its model before it reports healthy. */
export const SIM_MODEL_LOAD_S = 6;

/** Requests per second an endpoint receives at time t: its own base rate on a ten-minute wave. */
export function simulatedEndpointLoad(endpointId: string, t: number): number {
  const h = createHash("sha256").update(endpointId).digest();
  const base = 6 + (h[0]! % 15);
  const phase = (h[1]! / 255) * 2 * Math.PI;
  return base * (1 + 0.5 * Math.sin((2 * Math.PI * t) / 600_000 + phase));
}

/**
 * One serving sample of a replica carrying `rps` requests per second over `seconds`. Latency rises
 * with load and levels off the way a batching server's does (p95 stays under ~360 ms): a healthy
 * simulated replica meets the demo endpoints' SLA targets, so the demo never alerts on itself.
 */
export function simulatedReplicaSample(replicaId: string, rps: number, seconds: number, at: string) {
  const requests = Math.max(0, Math.round(rps * seconds + noise(1)));
  const p50 = 70 + (110 * rps) / (rps + 12) + noise(4);
  const p95 = p50 * 1.9 + noise(8);
  return {
    replica_id: replicaId,
    recorded_at: at,
    requests,
    errors: Math.random() < 0.05 ? Math.min(requests, 1) : 0,
    p50_ms: Math.round(Math.max(1, p50)),
    p95_ms: Math.round(Math.max(p50, p95)),
    p99_ms: Math.round(Math.max(p50, p95) * 1.45),
    tokens_per_s: Math.round(rps * 170),
  };
}

const noise = (spread: number) => (Math.random() * 2 - 1) * spread;

/**
 * What a simulated model answers: a grader prompt ("Reply PASS or RETRY") never passes the first
 * iteration (so a loop is seen looping), and passes more often the later the iteration it names,
 * always by the fourth; anything else gets a short plan.
 */
export function simulatedCompletion(prompt: string, model: string, random = Math.random()) {
  const iteration = Number(/iteration (\d+)/i.exec(prompt)?.[1] ?? 0);
  const content = /PASS or RETRY/i.test(prompt)
    ? iteration >= 1 && random < 0.25 + 0.25 * iteration ? "PASS" : "RETRY"
    : `1. Lower the learning rate to ${(2 + Math.floor(random * 3)) * 1e-4}. 2. Train ${1 + Math.floor(random * 3)} more epochs on the cleaned shard. 3. Re-run the eval suite.`;
  return { id: `chatcmpl-sim-${Math.floor(random * 1e9)}`, object: "chat.completion", model, choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage: { prompt_tokens: Math.ceil(prompt.length / 4), completion_tokens: Math.ceil(content.length / 4) } };
}

/** A simulated node's own loopback address (stable per hostname): 127.a.b.c, never 127.0.0.1. */
export function simulatedNodeAddress(hostname: string): string {
  const h = createHash("sha256").update(hostname).digest();
  return `127.${1 + (h[0]! % 254)}.${h[1]!}.${1 + (h[2]! % 254)}`;
}

/** What a simulated pod's port answers: an SSH banner on 22, a small page on the others. */
function podListener(host: string, containerPort: number, podName: string): Promise<net.Server> {
  const server =
    containerPort === 22
      ? net.createServer((socket) => {
          socket.on("error", () => {});
          socket.end("SSH-2.0-OpenSSH_9.6 GPUForge-simulated-pod\r\n");
        })
      : http.createServer((_req, res) => {
          res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(`<!doctype html><title>${podName}</title><h1>Simulated pod ${podName}</h1><p>Container port ${containerPort}, served by the GPUForge simulator.</p>`);
        });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve(server as net.Server));
  });
}

export function buildNodes(clusters: SimCluster[], baseUrl: string, log: (m: string) => void): SimNode[] {
  const nodes: SimNode[] = [];
  for (const c of clusters) {
    const client = createClient({ baseUrl, key: c.key, retryForMs: 30_000, log });
    const tag = c.clusterId.slice(0, 6);
    for (let p = 0; p < c.pods; p++)
      for (let r = 0; r < c.racksPerPod; r++)
        for (let n = 0; n < c.nodesPerRack; n++) {
          const hostname = `sim-${tag}-p${p + 1}-r${r + 1}-n${n + 1}`;
          const seed = createHash("sha256").update(hostname).digest("hex");
          nodes.push({
            hostname,
            address: simulatedNodeAddress(hostname),
            pod: `pod-${p + 1}`,
            rack: `rack-${p + 1}${String.fromCharCode(97 + r)}`,
            cluster: c,
            client,
            silent: false,
            jobs: new Map(),
            started: new Set(),
            replicas: new Map(),
            pods: new Map(),
            gpus: Array.from({ length: 8 }, (_, i) => ({ index: i, uuid: `GPU-sim-${seed.slice(0, 8)}-${seed.slice(8, 12)}-${i}`, util: Math.random() * 4 })),
          });
        }
  }
  return nodes;
}

export function startSimulator(opts: {
  baseUrl: string;
  clusters: SimCluster[];
  heartbeatS?: number;
  metricsS?: number;
  stateDir?: string;
  /** how often a simulated container prints a training step (default 5 s) */
  outputEveryS?: number;
  /** the simulated model servers: ms before answering ([min, max]), and the share of requests answered 500 */
  modelLatencyMs?: [number, number];
  modelErrorRate?: number;
  log?: (m: string) => void;
}) {
  const log = opts.log ?? ((m: string) => process.stderr.write(`${new Date().toISOString()} simulator: ${m}\n`));
  const nodes = buildNodes(opts.clusters, opts.baseUrl, log);
  const stateDir = opts.stateDir ?? path.join(os.tmpdir(), "gpuforge-simulator");
  // one outbox and one log spool per cluster: each cluster's reports go out with its own agent key
  const perCluster = new Map(
    opts.clusters.map((c) => [
      c.clusterId,
      {
        client: nodes.find((n) => n.cluster === c)!.client,
        outbox: new Outbox(path.join(stateDir, c.clusterId, "exit-reports.json"), log),
        logs: new LogSpool(path.join(stateDir, c.clusterId, "logs"), { log }),
      },
    ]),
  );
  const of = (n: SimNode) => perCluster.get(n.cluster.clusterId)!;
  const timers: NodeJS.Timeout[] = [];
  let stopped = false;
  const model = { latencyMs: opts.modelLatencyMs ?? ([60, 240] as [number, number]), errorRate: opts.modelErrorRate ?? 0 };

  const register = async (n: SimNode) => {
    const reply = await n.client.call<{ node: { id: string }; gpus: Array<{ id: string; uuid: string }> }>("POST", "/api/clusters/nodes", {
      hostname: n.hostname,
      pod: n.pod,
      rack: n.rack,
      cpu_cores: 224,
      memory_gb: 2048,
      agent_version: "0.2.0-sim",
      address: n.address,
      capabilities: { containers: true, runtime: "simulated containers" },
      system: { os: "Ubuntu 22.04.4 LTS (simulated)", kernel: "5.15.0-105-generic", driver_version: "560.35.03", cuda_version: "12.6" },
      gpus: n.gpus.map((g) => ({ uuid: g.uuid, index: g.index, gpu_type: n.cluster.gpuType, model: `NVIDIA ${n.cluster.gpuType} (simulated)`, memory_total_mb: n.cluster.memoryMb })),
    });
    n.id = reply.node.id;
    const byUuid = new Map(reply.gpus.map((g) => [g.uuid, g.id]));
    for (const g of n.gpus) g.id = byUuid.get(g.uuid);
  };

  const reconcileReplicas = (n: SimNode, assignments: ReplicaAssignment[]) => {
    const wanted = new Set(assignments.map((a) => a.replica_id));
    for (const [id, r] of n.replicas) {
      if (wanted.has(id)) continue;
      n.replicas.delete(id);
      r.closed = true;
      void r.server?.close();
      of(n).logs.close(placementKey(r.assignment));
      for (const g of n.gpus) if (g.jobId === `replica:${id}`) g.jobId = undefined;
    }
    for (const r of n.replicas.values()) if (r.server && !r.announced) announce(n, r);
    for (const a of assignments) {
      if (n.replicas.has(a.replica_id)) continue;
      const servingFrom = Date.now() + SIM_MODEL_LOAD_S * 1000;
      const entry: SimNode["replicas"] extends Map<string, infer E> ? E : never = { assignment: a, servingFrom };
      n.replicas.set(a.replica_id, entry);
      // the serving container's port, published on the node's address: answers /health once the model is loaded
      void startModelServer({ model: a.model, host: n.address, readyAt: servingFrom, latencyMs: model.latencyMs, errorRate: model.errorRate, complete: (p) => simulatedCompletion(p, a.model).choices[0]!.message.content })
        .then((server) => {
          if (entry.closed || stopped) return void server.close();
          entry.server = server;
          announce(n, entry);
        })
        .catch((e: unknown) => log(`replica ${a.replica_id}: model server: ${(e as Error).message}`));
      for (const g of n.gpus) if (a.gpu_ids.includes(g.id ?? "")) g.jobId = `replica:${a.replica_id}`;
      const key = placementKey(a);
      of(n).logs.open(key, { path: a.logs_path, attempt: a.attempt, fence: a.fence });
      of(n).logs.write(key, "stdout", `INFO loading ${a.model} on ${a.gpu_ids.length} GPU(s) (${a.image ?? "default serving image"})\n`);
      timers.push(setTimeout(() => n.replicas.has(a.replica_id) && of(n).logs.write(key, "stdout", `INFO model loaded in ${SIM_MODEL_LOAD_S}.0 s; serving on 0.0.0.0:8000\n`), SIM_MODEL_LOAD_S * 1000));
    }
  };

  /** Reports where a replica's model server listens, like an agent reports the host port it published (fenced). */
  const announce = (n: SimNode, r: { assignment: ReplicaAssignment; server?: ModelServer; announced?: boolean }) => {
    if (!r.server || r.announced || n.silent) return;
    r.announced = true;
    n.client
      .call("POST", r.assignment.address_path, { attempt: r.assignment.attempt, fence: r.assignment.fence, host_port: r.server.port }, 10_000)
      .catch((e: unknown) => {
        r.announced = false;
        log(`replica ${r.assignment.replica_id} address: ${(e as Error).message}`);
      });
  };

  /** Pods: each placement "runs" once (real listeners on the node's address for its ports), reported running; taken away, it stops and says so. */
  const reconcilePods = async (n: SimNode, assignments: PodAssignment[]) => {
    const wanted = new Map(assignments.map((a) => [placementKey(a), a]));
    for (const [key, p] of n.pods) {
      if (wanted.has(key)) continue;
      n.pods.delete(key);
      for (const l of p.listeners) l.close();
      for (const g of n.gpus) if (g.jobId === key) g.jobId = undefined;
      of(n).logs.write(key, "stdout", "received SIGTERM; stopping\n");
      of(n).logs.close(key);
      await n.client.call("POST", p.assignment.status_path, { attempt: p.assignment.attempt, fence: p.assignment.fence, status: "stopped" }, 10_000).catch((e: unknown) => log(`pod stop report: ${(e as Error).message}`));
    }
    for (const key of [...n.started]) if (key.startsWith("pod:") && !wanted.has(key) && !n.pods.has(key)) n.started.delete(key);
    for (const [key, a] of wanted) {
      const running = n.pods.get(key);
      if (running && !running.reported) {
        running.reported = true;
        await n.client.call("POST", a.status_path, { attempt: a.attempt, fence: a.fence, status: "running", ports: running.ports }, 10_000).catch(() => (running.reported = false));
      }
      if (n.started.has(key)) continue;
      n.started.add(key);
      for (const g of n.gpus) if (a.gpu_ids.includes(g.id ?? "")) g.jobId = key;
      const listeners = await Promise.all(a.ports.map((port) => podListener(n.address, port, a.pod_name)));
      const ports = a.ports.map((container_port, i) => ({ container_port, host_port: (listeners[i]!.address() as net.AddressInfo).port }));
      const entry = { assignment: a, listeners, ports, reported: false };
      n.pods.set(key, entry);
      of(n).logs.open(key, { path: a.logs_path, attempt: a.attempt, fence: a.fence });
      of(n).logs.write(key, "stdout", `[simulated pod ${a.pod_name} on ${a.gpu_ids.length} GPU(s) in ${a.image}]\n${a.ssh_public_key ? "sshd: authorized key installed for root; listening on 22\n" : ""}${a.ports.filter((p) => p !== 22).map((p) => `serving on 0.0.0.0:${p}\n`).join("")}`);
      entry.reported = true;
      await n.client.call("POST", a.status_path, { attempt: a.attempt, fence: a.fence, status: "running", ports }, 10_000).catch((e: unknown) => {
        entry.reported = false;
        log(`pod ${a.pod_id} running report: ${(e as Error).message}`);
      });
    }
  };

  /** Every replica of every node posts a sample for the last `seconds`, sharing its endpoint's load with its siblings. */
  const serve = async (seconds: number) => {
    const now = Date.now();
    const serving = nodes.flatMap((n) => (n.silent ? [] : [...n.replicas.values()].filter((r) => r.servingFrom <= now).map((r) => ({ n, r }))));
    const siblings = new Map<string, number>();
    for (const { r } of serving) siblings.set(r.assignment.endpoint_id, (siblings.get(r.assignment.endpoint_id) ?? 0) + 1);
    const at = new Date(now).toISOString();
    await Promise.all(
      serving.map(({ n, r }) => {
        const rps = simulatedEndpointLoad(r.assignment.endpoint_id, now) / siblings.get(r.assignment.endpoint_id)!;
        const sample = { ...simulatedReplicaSample(r.assignment.replica_id, rps, seconds, at), fence: r.assignment.fence };
        if (Math.random() < seconds / 60) of(n).logs.write(placementKey(r.assignment), "stdout", `INFO ${sample.requests} requests in ${seconds} s, p95 ${sample.p95_ms} ms\n`);
        return n.client.call("POST", r.assignment.metrics_path, { samples: [sample] }, 10_000).catch((e: unknown) => log((e as Error).message));
      }),
    );
  };

  /** What a simulated container prints: a training loop's progress, now and then a warning. */
  const startOutput = (n: SimNode, a: JobAssignment, key: string): NodeJS.Timeout[] => {
    if (!a.image && !a.command) return [];
    const logs = of(n).logs;
    logs.open(key, { path: a.logs_path, attempt: a.attempt, fence: a.fence });
    logs.write(key, "stdout", `+ ${a.command ?? "(image entrypoint)"}\n[simulated container ${a.image ?? ""} on ${a.gpu_ids.length} GPU(s), attempt ${a.attempt}]\n`);
    const everyS = opts.outputEveryS ?? 5;
    const steps = Math.max(1, Math.floor((a.duration_s ?? 300) / everyS));
    let step = 0;
    let loss = 2.4 + Math.random() * 0.6;
    const tick = setInterval(() => {
      step++;
      loss *= 0.97 + Math.random() * 0.02;
      logs.write(key, "stdout", `step ${step}/${steps}  loss=${loss.toFixed(4)}  lr=${(3e-4 * (1 - step / (steps + 1))).toExponential(2)}  tokens/s=${Math.round(9000 + Math.random() * 900) * a.gpu_ids.length}\n`);
      if (Math.random() < 0.05) logs.write(key, "stderr", `UserWarning: gradient norm ${(5 + Math.random() * 10).toFixed(2)} clipped to 1.0\n`);
    }, everyS * 1000);
    return [tick];
  };

  const reconcile = (n: SimNode, all: Assignment[]) => {
    reconcileReplicas(n, replicasOf(all));
    void reconcilePods(n, podsOf(all)).catch((e: unknown) => log(`pods: ${(e as Error).message}`));
    const assignments = jobsOf(all);
    const wanted = new Map(assignments.map((a) => [placementKey(a), a]));
    for (const [key, run] of n.jobs) {
      if (wanted.has(key)) continue;
      for (const t of run.timers) clearTimeout(t);
      n.jobs.delete(key);
      of(n).logs.close(key);
      for (const g of n.gpus) if (g.jobId === key) g.jobId = undefined;
    }
    // like the real agent: a placement this node started is never started again, and is
    // forgotten only once the control plane stopped assigning it and has its report
    for (const key of [...n.started]) if (key.startsWith("job:") && !wanted.has(key) && !n.jobs.has(key) && !of(n).outbox.has(key)) n.started.delete(key);
    for (const [key, a] of wanted) {
      if (n.started.has(key)) continue;
      n.started.add(key);
      for (const g of n.gpus) if (a.gpu_ids.includes(g.id ?? "")) g.jobId = key;
      const output = startOutput(n, a, key);
      const done = setTimeout(() => {
        n.jobs.delete(key);
        for (const t of output) clearInterval(t);
        for (const g of n.gpus) if (g.jobId === key) g.jobId = undefined;
        if (a.image || a.command) of(n).logs.write(key, "stdout", "training finished; checkpoint saved to /workspace/out\n");
        of(n).logs.close(key);
        const report = () => of(n).outbox.add({ key, job_id: a.job_id, attempt: a.attempt, fence: a.fence, status: "completed", exit_code: 0, finished_at: new Date().toISOString() });
        if (!(a.image || a.command)) return report();
        // like a real workload: the container posts its outputs with its own token, then exits
        const outputs = { checkpoint: `s3://demo-checkpoints/${a.job_id.slice(0, 8)}/attempt-${a.attempt}`, train_loss: Math.round((1.2 + Math.random()) * 1000) / 1000, eval_score: Math.round((0.6 + Math.random() * 0.35) * 1000) / 1000 };
        void createClient({ baseUrl: opts.baseUrl, key: a.report_token, retryForMs: 10_000 })
          .call("POST", a.outputs_path, { outputs })
          .catch((e: unknown) => log(`outputs of job ${a.job_id}: ${(e as Error).message}`))
          .finally(report);
      }, (a.duration_s ?? 300) * 1000);
      n.jobs.set(key, { assignment: a, timers: [done, ...output] });
    }
  };

  const heartbeat = async (n: SimNode) => {
    if (n.silent || !n.id) return;
    const reply = await n.client.call<{ assignments: Assignment[] }>("POST", `/api/clusters/nodes/${n.id}/heartbeat`, {
      gpus: n.gpus.map((g) => ({ uuid: g.uuid, healthy: true, ...(g.xidPending ? { xid_errors: [g.xidPending] } : {}) })),
    });
    for (const g of n.gpus) g.xidPending = undefined;
    reconcile(n, reply.assignments);
  };

  const sample = (n: SimNode, g: SimGpu, at: string) => {
    const target = g.jobId?.startsWith("replica:") ? 55 + noise(10) : g.jobId?.startsWith("pod:") ? 30 + noise(15) : g.jobId ? 90 + noise(8) : 2 + noise(2);
    g.util = Math.min(100, Math.max(0, g.util + (target - g.util) * 0.6 + noise(1.5)));
    const temp = 30 + g.util * 0.45 + noise(1.5) + (g.overheat ? 40 : 0);
    const power = 70 + (g.util / 100) * (n.cluster.tdpW - 70) + noise(8);
    return {
      gpu_uuid: g.uuid,
      recorded_at: at,
      utilization_pct: Math.round(g.util * 10) / 10,
      memory_used_mb: g.jobId ? Math.round(n.cluster.memoryMb * (0.7 + Math.random() * 0.25)) : 0,
      memory_total_mb: n.cluster.memoryMb,
      temperature_c: Math.round(Math.min(120, temp) * 10) / 10,
      power_draw_w: Math.round(Math.max(0, power) * 10) / 10,
      ...(g.xidPending ? { xid_errors: [g.xidPending] } : {}),
    };
  };

  const metrics = async (n: SimNode) => {
    if (n.silent || !n.id) return;
    const at = new Date().toISOString();
    await n.client.call("POST", "/api/clusters/metrics", { metrics: n.gpus.map((g) => sample(n, g, at)) });
  };

  const every = (seconds: number, fn: () => Promise<unknown>) => {
    const tick = async () => {
      if (stopped) return;
      await fn().catch((e: unknown) => log((e as Error).message));
      if (!stopped) timers.push(setTimeout(tick, seconds * 1000));
    };
    timers.push(setTimeout(tick, Math.random() * seconds * 1000));
  };

  const ready = (async () => {
    for (const n of nodes) await register(n);
    log(`registered ${nodes.length} node(s), ${nodes.length * 8} GPUs`);
    for (const n of nodes) {
      every(opts.heartbeatS ?? 10, () => heartbeat(n));
      every(opts.metricsS ?? 5, () => metrics(n));
    }
    for (const c of perCluster.values()) {
      every(opts.heartbeatS ?? 10, () => c.outbox.flush(c.client));
      every(2, () => c.logs.flush(c.client));
    }
    every(opts.metricsS ?? 5, () => serve(opts.metricsS ?? 5));
  })();

  return {
    nodes,
    ready,
    injectFault(hostname: string, kind: FaultKind, gpuIndex = 0): boolean {
      const n = nodes.find((x) => x.hostname === hostname);
      if (!n) return false;
      const g = n.gpus[gpuIndex] ?? n.gpus[0]!;
      if (kind === "xid79") g.xidPending = 79;
      if (kind === "overheat") g.overheat = true;
      if (kind === "silent") n.silent = true;
      if (kind === "clear") {
        n.silent = false;
        for (const x of n.gpus) x.overheat = false;
      }
      log(`fault ${kind} on ${hostname} GPU ${g.index}`);
      return true;
    },
    /** pushes one heartbeat and one metrics report of a node now (benchmarks use it to time faults) */
    async reportNow(hostname: string) {
      const n = nodes.find((x) => x.hostname === hostname);
      if (!n) return;
      await metrics(n);
      await heartbeat(n);
    },
    /** The model servers of the replicas this simulator serves now (tests change their latency, errors, health). */
    modelServers(): Map<string, ModelServer> {
      return new Map(nodes.flatMap((n) => [...n.replicas.entries()].flatMap(([id, r]) => (r.server ? [[id, r.server] as const] : []))));
    },
    setModelBehaviour(o: { latencyMs?: [number, number]; errorRate?: number }) {
      Object.assign(model, o);
      for (const n of nodes) for (const r of n.replicas.values()) r.server?.set(o);
    },
    stop() {
      stopped = true;
      for (const n of nodes) {
        for (const r of n.replicas.values()) void r.server?.close();
        for (const p of n.pods.values()) for (const l of p.listeners) l.close();
      }
      for (const t of timers) clearTimeout(t);
      for (const n of nodes) for (const run of n.jobs.values()) for (const t of run.timers) clearTimeout(t);
    },
  };
}

const GPU_PROFILES: Record<string, { memoryMb: number; tdpW: number }> = {
  H100: { memoryMb: 81_559, tdpW: 700 },
  H200: { memoryMb: 143_771, tdpW: 700 },
  A100: { memoryMb: 81_920, tdpW: 400 },
  L40S: { memoryMb: 46_068, tdpW: 350 },
  B200: { memoryMb: 183_359, tdpW: 1_000 },
  MI300X: { memoryMb: 196_608, tdpW: 750 },
};

export function simClusters(keys: Record<string, string>, layout: { pods: number; racksPerPod: number; nodesPerRack: number }, gpuTypes = ["H100", "A100"]): SimCluster[] {
  return Object.entries(keys).map(([clusterId, key], i) => {
    const gpuType = gpuTypes[i % gpuTypes.length]!;
    return { clusterId, key, gpuType, ...GPU_PROFILES[gpuType]!, ...layout };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      url: { type: "string", default: process.env.GPUFORGE_URL ?? "http://127.0.0.1:3000" },
      keys: { type: "string", default: ".data/demo-agent-keys.json" },
      pods: { type: "string", default: "2" },
      racks: { type: "string", default: "2" },
      nodes: { type: "string", default: "2" },
    },
  });
  const latency = /^(\d+)-(\d+)$/.exec(process.env.SIM_MODEL_LATENCY_MS ?? "");
  const keys = JSON.parse(readFileSync(values.keys!, "utf8")) as Record<string, string>;
  const sim = startSimulator({
    baseUrl: values.url!,
    clusters: simClusters(keys, { pods: Number(values.pods), racksPerPod: Number(values.racks), nodesPerRack: Number(values.nodes) }),
    stateDir: path.resolve(".data", "simulator"),
    ...(latency ? { modelLatencyMs: [Number(latency[1]), Number(latency[2])] as [number, number] } : {}),
    ...(process.env.SIM_MODEL_ERROR_RATE ? { modelErrorRate: Number(process.env.SIM_MODEL_ERROR_RATE) } : {}),
  });
  const port = Number(process.env.SIM_CONTROL_PORT ?? 0);
  if (port) {
    http
      .createServer((req, res) => {
        let body = "";
        req.on("data", (c) => (body += c));
        req.on("end", () => {
          if (req.method === "GET" && req.url === "/nodes") {
            res.end(JSON.stringify(sim.nodes.map((n) => ({ hostname: n.hostname, id: n.id, silent: n.silent }))));
            return;
          }
          if (req.method === "POST" && req.url === "/faults") {
            try {
              const f = JSON.parse(body) as { hostname: string; kind: FaultKind; gpu_index?: number };
              const ok = sim.injectFault(f.hostname, f.kind, f.gpu_index);
              res.writeHead(ok ? 200 : 404).end(JSON.stringify({ ok }));
            } catch {
              res.writeHead(400).end(JSON.stringify({ ok: false }));
            }
            return;
          }
          res.writeHead(404).end();
        });
      })
      .listen(port, "127.0.0.1");
  }
  process.on("SIGINT", () => (sim.stop(), process.exit(0)));
  process.on("SIGTERM", () => (sim.stop(), process.exit(0)));
}
