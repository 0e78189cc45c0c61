// The fleet simulator: N virtual nodes × 8 GPUs that behave like real agents and speak only the
// HTTP API. Each node declares that it runs containers and simulates them: assigned work runs for
// its duration_s, prints plausible training output (shipped through the same log spool as the real
// agent), and is reported, fenced, through the same durable outbox; like the real agent it starts a
// placement at most once, and each node keeps its own state directory. Utilization, temperature and
// power follow what runs on each GPU. Endpoint replicas assigned to a node "load their model" for a
// few seconds and then serve simulated traffic: a slow wave of requests per endpoint shared by its
// replicas, latency rising with each replica's load, posted to the endpoint's metrics route (with
// the replica's fence) like a real serving sidecar. Every replica is also served by a small real
// HTTP model server (agent/src/model-server.ts: OpenAI-style completions, streaming, configurable
// latency and error rate, /health while loaded) listening on its node's own address (each simulated
// node has a loopback address of its own, 127.x.y.z, in agent/src/sim-addresses), at a port the node reports like a real agent
// reports the host port it published — so the inference gateway, its probes and the SLA work end to
// end. Pods assigned to a node "run": their ports are real listeners on the node's address (an SSH
// banner on 22, a small page on the others), reported running with their host ports, and stopped
// when the control plane takes them away. Simulated job containers post outputs with their
// placement's token before they exit, as real workloads do.
//
// Given several app addresses (and ingest servers for heartbeats and metrics), nodes are spread
// over them and move to the next one when theirs does not answer, as agents behind a load balancer
// would. Faults are injected on request (FaultKind below).
//
// `npm run simulator -- --keys .data/demo-agent-keys.json` (cluster id → agent key), with a control
// endpoint on 127.0.0.1:$SIM_CONTROL_PORT: POST /faults {"hostname", "kind", "gpu_index"?, "xid"?}.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import { parseArgs } from "node:util";
import type { Assignment, HeartbeatReply, JobAssignment, PodAssignment, ReplicaAssignment } from "../../lib/fleet/assignments";
import { ApiError, createClient, type Client, type FetchLike } from "./client";
import { LogSpool } from "./log-spool";
import { startModelServer, type ModelServer } from "./model-server";
import type { SimBmcFault } from "./sim-bmc";
import { startSimBmcFleet, type SimBmcFleetOptions } from "./sim-bmc-fleet";
import { Outbox, type ExitReport, type ReportAnswer } from "./outbox";
import { placementKey } from "./placement-book";
import { pooledFetch } from "./pooled-fetch";
import { simAddressesFromBook, simAddressKey } from "./sim-addresses";
import { jobsOf, podsOf, replicasOf } from "./runner";
import { SimHandovers } from "./sim-handover";
import {
  gpuProfile,
  noise,
  SIM_MODEL_LOAD_S,
  simulatedCompletion,
  simulatedEndpointLoad,
  simulatedExitCode,
  simulatedReplicaSample,
} from "./sim-signals";

export interface SimCluster {
  clusterId: string;
  key: string;
  gpuType: string;
  memoryMb: number;
  tdpW: number;
  pods: number;
  racksPerPod: number;
  nodesPerRack: number;
  /** one node of this name instead of the pod/rack layout's (a provider instance, agent/src/sim-provider-instance.ts) */
  hostname?: string;
  /** GPUs per node (default 8) */
  gpusPerNode?: number;
}

/**
 * Faults a node plays on request:
 *   xid79, xid  a GPU reports an XID with the next heartbeat and metrics (xid: any code, fatal or benign)
 *   overheat    a GPU runs 40 °C hotter until cleared
 *   silent      the node dies: nothing more is heard from it and its containers die with it; on
 *               `clear` it boots again, registers and reports each run it had as interrupted
 *   partition   the node is cut off: nothing it sends arrives, its work goes on; on `clear` what it
 *               held back (exit reports, logs) is delivered, by then usually stale
 *   restart     the agent restarts at once: re-reads its outbox and log spool from disk, registers
 *               again and re-sends its last acknowledged exit reports and metrics (as if it died
 *               before forgetting them); its containers keep running
 *   implant     a bootkit loads before the kernel on the node's next boot: its next attestation
 *               fails and its handover quarantines it (agent/src/sim-handover.ts)
 *   wipe_fail   the node's next wipe cannot reset one of its GPUs
 *   clear       ends overheating, silence, partitions, implants and wipe failures
 */
export type FaultKind = "xid79" | "xid" | "overheat" | "silent" | "partition" | "restart" | "implant" | "wipe_fail" | "clear";

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
  /** registration, exit reports, logs and replica samples */
  client: Client;
  /** heartbeats, metrics and log chunks: the ingest servers when there are any */
  hot: Client;
  id?: string;
  gpus: SimGpu[];
  silent: boolean;
  partitioned: boolean;
  /** running placements by key */
  jobs: Map<string, { assignment: JobAssignment; timers: NodeJS.Timeout[] }>;
  /** every placement this node ever started, until the control plane stops assigning it and has its report */
  started: Set<string>;
  replicas: Map<
    string,
    { assignment: ReplicaAssignment; servingFrom: number; server?: ModelServer; announced?: boolean; closed?: boolean }
  >;
  /** pods running here, by placement key */
  pods: Map<
    string,
    { assignment: PodAssignment; listeners: net.Server[]; ports: Array<{ container_port: number; host_port: number }>; reported: boolean }
  >;
  outbox: Outbox;
  logs: LogSpool;
  /** the exit reports the control plane took last: a restarting agent sends them again */
  acked: ExitReport[];
  lastMetrics?: unknown;
}

export interface SimulatorOptions {
  /** the app, or several instances of it: nodes are spread over them */
  baseUrl: string | readonly string[];
  /** ingest servers for heartbeats and metrics (`npm run ingest`); a node falls back to the app when they do not answer */
  ingestUrl?: string | readonly string[];
  clusters: SimCluster[];
  heartbeatS?: number;
  metricsS?: number;
  stateDir?: string;
  /** how often a simulated container prints a training step (default 5 s) */
  outputEveryS?: number;
  /** the simulated model servers: ms before answering ([min, max]), and the share of requests answered 500 */
  modelLatencyMs?: [number, number];
  modelErrorRate?: number;
  /** give every node a simulated Redfish BMC on its own address (agent/src/sim-bmc-fleet.ts) */
  bmc?: SimBmcFleetOptions;
  log?: (m: string) => void;
  /** connections the whole simulated fleet keeps to each app or ingest server (default 256) */
  maxSocketsPerOrigin?: number;
  /** hears every answer to a node's exit reports */
  onExitReport?: (e: { hostname: string; report: ExitReport; answer: ReportAnswer }) => void;
  /** handovers: a simulated wipe's duration (default SIM_WIPE_S or 6 s), and which TPM nodes attest with */
  wipeS?: number;
  tpm?: "swtpm" | "simulated" | "auto";
}

/** The control plane refused (or never answered) a node's registration: which node, and why. */
export class FleetRegistrationError extends Error {
  readonly hostname: string;
  readonly clusterId: string;
  readonly address: string;
  /** the answer's status and error code, when there was an answer */
  readonly status?: number;
  readonly code?: string;
  readonly reason: string;
  constructor(n: Pick<SimNode, "hostname" | "address" | "cluster">, cause: unknown) {
    const body =
      cause instanceof ApiError ? (cause.body as { error?: { code?: string; message?: string; details?: unknown } } | null) : null;
    const reason =
      cause instanceof ApiError
        ? `HTTP ${cause.status} ${body?.error?.code ?? ""}: ${body?.error?.message ?? JSON.stringify(cause.body)}${body?.error?.details ? ` ${JSON.stringify(body.error.details)}` : ""}`
        : (cause as Error).message;
    super(`node ${n.hostname} (cluster ${n.cluster.clusterId}, address ${n.address}) could not register: ${reason}`, { cause });
    this.name = "FleetRegistrationError";
    this.hostname = n.hostname;
    this.clusterId = n.cluster.clusterId;
    this.address = n.address;
    this.reason = reason;
    if (cause instanceof ApiError) {
      this.status = cause.status;
      this.code = body?.error?.code;
    }
  }
}

const ACKED_KEPT = 5;
const list = (x: string | readonly string[] | undefined): readonly string[] => (x === undefined ? [] : typeof x === "string" ? [x] : x);
/** The same addresses, starting at the i-th: node i talks to its own instance first. */
const rotate = (xs: readonly string[], i: number) => xs.map((_, k) => xs[(i + k) % xs.length]!);

const simHostname = (c: SimCluster, p: number, r: number, n: number) =>
  c.hostname ?? `sim-${c.clusterId.slice(0, 6)}-p${p + 1}-r${r + 1}-n${n + 1}`;

/** Every node's address, handed out in order and kept in the state directory (agent/src/sim-addresses). */
function simAddresses(clusters: readonly SimCluster[], stateDir: string): Map<string, string> {
  const keys: string[] = [];
  for (const c of clusters)
    for (let p = 0; p < c.pods; p++)
      for (let r = 0; r < c.racksPerPod; r++)
        for (let n = 0; n < c.nodesPerRack; n++) keys.push(simAddressKey(c.clusterId, simHostname(c, p, r, n)));
  return simAddressesFromBook(stateDir, keys);
}

function buildNodes(opts: SimulatorOptions, stateDir: string, log: (m: string) => void, fetch: FetchLike): SimNode[] {
  const apps = list(opts.baseUrl);
  const ingest = list(opts.ingestUrl);
  const nodes: SimNode[] = [];
  const addresses = simAddresses(opts.clusters, stateDir);
  for (const c of opts.clusters) {
    for (let p = 0; p < c.pods; p++)
      for (let r = 0; r < c.racksPerPod; r++)
        for (let n = 0; n < c.nodesPerRack; n++) {
          const i = nodes.length;
          const hostname = simHostname(c, p, r, n);
          const client = createClient({ baseUrl: rotate(apps, i), key: c.key, retryForMs: 30_000, log, fetch });
          const hot = ingest.length
            ? createClient({ baseUrl: [...rotate(ingest, i), ...rotate(apps, i)], key: c.key, retryForMs: 30_000, log, fetch })
            : client;
          const dir = path.join(stateDir, c.clusterId, hostname);
          const node: SimNode = {
            hostname,
            address: addresses.get(simAddressKey(c.clusterId, hostname))!,
            pod: `pod-${p + 1}`,
            rack: `rack-${p + 1}${String.fromCharCode(97 + r)}`,
            cluster: c,
            client,
            hot,
            silent: false,
            partitioned: false,
            jobs: new Map(),
            started: new Set(),
            replicas: new Map(),
            pods: new Map(),
            outbox: undefined as unknown as Outbox,
            logs: new LogSpool(path.join(dir, "logs"), { log }),
            acked: [],
            gpus: Array.from({ length: c.gpusPerNode ?? 8 }, (_, g) => ({
              index: g,
              uuid: simGpuUuid(hostname, g),
              util: Math.random() * 4,
            })),
          };
          node.outbox = openOutbox(node, dir, log, opts.onExitReport);
          nodes.push(node);
        }
  }
  return nodes;
}

function simGpuUuid(hostname: string, index: number): string {
  const seed = createHash("sha256").update(hostname).digest("hex");
  return `GPU-sim-${seed.slice(0, 8)}-${seed.slice(8, 12)}-${index}`;
}

function openOutbox(n: SimNode, dir: string, log: (m: string) => void, hook: SimulatorOptions["onExitReport"]): Outbox {
  return new Outbox(path.join(dir, "exit-reports.json"), log, (report, answer) => {
    if (answer.outcome === "accepted") n.acked = [...n.acked, report].slice(-ACKED_KEPT);
    hook?.({ hostname: n.hostname, report, answer });
  });
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
          res
            .writeHead(200, { "content-type": "text/html; charset=utf-8" })
            .end(
              `<!doctype html><title>${podName}</title><h1>Simulated pod ${podName}</h1><p>Container port ${containerPort}, served by the GPUForge simulator.</p>`,
            );
        });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve(server as net.Server));
  });
}

/**
 * How long a simulated model takes to answer by default, sized so the demo's endpoints meet the SLAs
 * they are created with (p95 ≤ 400–450 ms) on a busy laptop: the gateway reads a minute's p95 as the
 * upper bound of its latency bucket (…, 200, 300, 500 ms), so one answer over 300 ms in a quiet
 * minute reads as 500. At 30–140 ms plus the gateway's own time, answers land in the 150 and 200 ms
 * buckets with room for a loaded machine (at 60–240 ms the demo missed its own latency target and
 * raised an SLA alert on a newcomer's first view, issue 32).
 */
export const SIM_MODEL_LATENCY_MS: [number, number] = [30, 140];

export function startSimulator(opts: SimulatorOptions) {
  const log = opts.log ?? ((m: string) => process.stderr.write(`${new Date().toISOString()} simulator: ${m}\n`));
  const stateDir = opts.stateDir ?? path.join(os.tmpdir(), "gpuforge-simulator");
  // every simulated node's requests share kept-alive connections (agent/src/pooled-fetch.ts)
  const transport = pooledFetch({ maxSocketsPerOrigin: opts.maxSocketsPerOrigin ?? 256 });
  const nodes = buildNodes(opts, stateDir, log, transport);
  const byHostname = new Map(nodes.map((n) => [n.hostname, n]));
  const dirOf = (n: SimNode) => path.join(stateDir, n.cluster.clusterId, n.hostname);
  const reachable = (n: SimNode) => !n.silent && !n.partitioned && n.id !== undefined;
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const model = { latencyMs: opts.modelLatencyMs ?? SIM_MODEL_LATENCY_MS, errorRate: opts.modelErrorRate ?? 0 };
  const handovers = new SimHandovers({
    stateDir: path.join(stateDir, "handover"),
    wipeS: opts.wipeS ?? Number(process.env.SIM_WIPE_S ?? 6),
    tpm: opts.tpm ?? ((process.env.SIM_TPM as "swtpm" | "simulated" | undefined) || "auto"),
    fleetSize: nodes.length,
    log,
  });

  /** A timer the simulator forgets once it fired (a long run at fleet scale arms millions). */
  const after = (ms: number, fn: () => unknown) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };
  const every = (seconds: number, fn: () => Promise<unknown>) => {
    const tick = async () => {
      if (stopped) return;
      await fn().catch((e: unknown) => log((e as Error).message));
      if (!stopped) after(seconds * 1000, tick);
    };
    after(Math.random() * seconds * 1000, tick);
  };

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
      gpus: n.gpus.map((g) => ({
        uuid: g.uuid,
        index: g.index,
        gpu_type: n.cluster.gpuType,
        model: `NVIDIA ${n.cluster.gpuType} (simulated)`,
        memory_total_mb: n.cluster.memoryMb,
      })),
    });
    n.id = reply.node.id;
    const byUuid = new Map(reply.gpus.map((g) => [g.uuid, g.id]));
    for (const g of n.gpus) g.id = byUuid.get(g.uuid);
  };

  const freeGpus = (n: SimNode, holder: string) => {
    for (const g of n.gpus) if (g.jobId === holder) g.jobId = undefined;
  };

  const reconcileReplicas = (n: SimNode, assignments: ReplicaAssignment[]) => {
    const wanted = new Set(assignments.map((a) => a.replica_id));
    for (const [id, r] of n.replicas) {
      if (wanted.has(id)) continue;
      n.replicas.delete(id);
      r.closed = true;
      void r.server?.close();
      n.logs.close(placementKey(r.assignment));
      freeGpus(n, `replica:${id}`);
    }
    for (const r of n.replicas.values()) if (r.server && !r.announced) announce(n, r);
    for (const a of assignments) {
      if (n.replicas.has(a.replica_id)) continue;
      const servingFrom = Date.now() + SIM_MODEL_LOAD_S * 1000;
      const entry: SimNode["replicas"] extends Map<string, infer E> ? E : never = { assignment: a, servingFrom };
      n.replicas.set(a.replica_id, entry);
      // the serving container's port, published on the node's address: answers /health once the model is loaded
      void startModelServer({
        model: a.model,
        host: n.address,
        readyAt: servingFrom,
        latencyMs: model.latencyMs,
        errorRate: model.errorRate,
        complete: (p) => simulatedCompletion(p, a.model).choices[0]!.message.content,
      })
        .then((server) => {
          if (entry.closed || stopped) return void server.close();
          entry.server = server;
          announce(n, entry);
        })
        .catch((e: unknown) => log(`replica ${a.replica_id}: model server: ${(e as Error).message}`));
      for (const g of n.gpus) if (a.gpu_ids.includes(g.id ?? "")) g.jobId = `replica:${a.replica_id}`;
      const key = placementKey(a);
      n.logs.open(key, { path: a.logs_path, attempt: a.attempt, fence: a.fence });
      n.logs.write(key, "stdout", `INFO loading ${a.model} on ${a.gpu_ids.length} GPU(s) (${a.image ?? "default serving image"})\n`);
      after(
        SIM_MODEL_LOAD_S * 1000,
        () =>
          n.replicas.has(a.replica_id) &&
          n.logs.write(key, "stdout", `INFO model loaded in ${SIM_MODEL_LOAD_S}.0 s; serving on 0.0.0.0:8000\n`),
      );
    }
  };

  /** Reports where a replica's model server listens, like an agent reports the host port it published (fenced). */
  const announce = (n: SimNode, r: { assignment: ReplicaAssignment; server?: ModelServer; announced?: boolean }) => {
    if (!r.server || r.announced || !reachable(n)) return;
    r.announced = true;
    n.client
      .call(
        "POST",
        r.assignment.address_path,
        { attempt: r.assignment.attempt, fence: r.assignment.fence, host_port: r.server.port },
        10_000,
      )
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
      freeGpus(n, key);
      n.logs.write(key, "stdout", "received SIGTERM; stopping\n");
      n.logs.close(key);
      await n.client
        .call("POST", p.assignment.status_path, { attempt: p.assignment.attempt, fence: p.assignment.fence, status: "stopped" }, 10_000)
        .catch((e: unknown) => log(`pod stop report: ${(e as Error).message}`));
    }
    for (const key of [...n.started]) if (key.startsWith("pod:") && !wanted.has(key) && !n.pods.has(key)) n.started.delete(key);
    for (const [key, a] of wanted) {
      const running = n.pods.get(key);
      if (running && !running.reported) {
        running.reported = true;
        await n.client
          .call("POST", a.status_path, { attempt: a.attempt, fence: a.fence, status: "running", ports: running.ports }, 10_000)
          .catch(() => (running.reported = false));
      }
      if (n.started.has(key)) continue;
      n.started.add(key);
      for (const g of n.gpus) if (a.gpu_ids.includes(g.id ?? "")) g.jobId = key;
      const listeners = await Promise.all(a.ports.map((port) => podListener(n.address, port, a.pod_name)));
      const ports = a.ports.map((container_port, i) => ({ container_port, host_port: (listeners[i]!.address() as net.AddressInfo).port }));
      const entry = { assignment: a, listeners, ports, reported: false };
      n.pods.set(key, entry);
      n.logs.open(key, { path: a.logs_path, attempt: a.attempt, fence: a.fence });
      n.logs.write(
        key,
        "stdout",
        `[simulated pod ${a.pod_name} on ${a.gpu_ids.length} GPU(s) in ${a.image}]\n${a.ssh_public_key ? "sshd: authorized key installed for root; listening on 22\n" : ""}${a.ports
          .filter((p) => p !== 22)
          .map((p) => `serving on 0.0.0.0:${p}\n`)
          .join("")}`,
      );
      entry.reported = true;
      await n.client
        .call("POST", a.status_path, { attempt: a.attempt, fence: a.fence, status: "running", ports }, 10_000)
        .catch((e: unknown) => {
          entry.reported = false;
          log(`pod ${a.pod_id} running report: ${(e as Error).message}`);
        });
    }
  };

  /** Every replica of every reachable node posts a sample for the last `seconds`, sharing its endpoint's load with its siblings. */
  const serve = async (seconds: number) => {
    const now = Date.now();
    const serving = nodes.flatMap((n) =>
      reachable(n) ? [...n.replicas.values()].filter((r) => r.servingFrom <= now).map((r) => ({ n, r })) : [],
    );
    const siblings = new Map<string, number>();
    for (const { r } of serving) siblings.set(r.assignment.endpoint_id, (siblings.get(r.assignment.endpoint_id) ?? 0) + 1);
    const at = new Date(now).toISOString();
    await Promise.all(
      serving.map(({ n, r }) => {
        const rps = simulatedEndpointLoad(r.assignment.endpoint_id, now) / siblings.get(r.assignment.endpoint_id)!;
        const sample = { ...simulatedReplicaSample(r.assignment.replica_id, rps, seconds, at), fence: r.assignment.fence };
        if (Math.random() < seconds / 60)
          n.logs.write(placementKey(r.assignment), "stdout", `INFO ${sample.requests} requests in ${seconds} s, p95 ${sample.p95_ms} ms\n`);
        return n.client
          .call("POST", r.assignment.metrics_path, { samples: [sample] }, 10_000)
          .catch((e: unknown) => log((e as Error).message));
      }),
    );
  };

  /** What a simulated container prints: a training loop's progress, now and then a warning. */
  const startOutput = (n: SimNode, a: JobAssignment, key: string): NodeJS.Timeout[] => {
    if (!a.image && !a.command) return [];
    n.logs.open(key, { path: a.logs_path, attempt: a.attempt, fence: a.fence });
    n.logs.write(
      key,
      "stdout",
      `+ ${a.command ?? "(image entrypoint)"}\n[simulated container ${a.image ?? ""} on ${a.gpu_ids.length} GPU(s), attempt ${a.attempt}]\n`,
    );
    const everyS = opts.outputEveryS ?? 5;
    const steps = Math.max(1, Math.floor((a.duration_s ?? 300) / everyS));
    let step = 0;
    let loss = 2.4 + Math.random() * 0.6;
    const tick = setInterval(() => {
      step++;
      loss *= 0.97 + Math.random() * 0.02;
      n.logs.write(
        key,
        "stdout",
        `step ${step}/${steps}  loss=${loss.toFixed(4)}  lr=${(3e-4 * (1 - step / (steps + 1))).toExponential(2)}  tokens/s=${Math.round(9000 + Math.random() * 900) * a.gpu_ids.length}\n`,
      );
      if (Math.random() < 0.05)
        n.logs.write(key, "stderr", `UserWarning: gradient norm ${(5 + Math.random() * 10).toFixed(2)} clipped to 1.0\n`);
    }, everyS * 1000);
    return [tick];
  };

  const reconcile = (n: SimNode, all: Assignment[]) => {
    reconcileReplicas(n, replicasOf(all));
    void reconcilePods(n, podsOf(all)).catch((e: unknown) => log(`pods: ${(e as Error).message}`));
    const wanted = new Map(jobsOf(all).map((a) => [placementKey(a), a]));
    for (const [key, run] of n.jobs) {
      if (wanted.has(key)) continue;
      for (const t of run.timers) clearTimeout(t);
      n.jobs.delete(key);
      n.logs.close(key);
      freeGpus(n, key);
    }
    // like the real agent: a placement this node started is never started again, and is
    // forgotten only once the control plane stopped assigning it and has its report
    for (const key of [...n.started])
      if (key.startsWith("job:") && !wanted.has(key) && !n.jobs.has(key) && !n.outbox.has(key)) n.started.delete(key);
    for (const [key, a] of wanted) {
      if (n.started.has(key)) continue;
      n.started.add(key);
      for (const g of n.gpus) if (a.gpu_ids.includes(g.id ?? "")) g.jobId = key;
      const output = startOutput(n, a, key);
      const done = setTimeout(
        () => {
          n.jobs.delete(key);
          for (const t of output) clearInterval(t);
          freeGpus(n, key);
          const exitCode = simulatedExitCode(a.command);
          if (a.image || a.command)
            n.logs.write(
              key,
              "stdout",
              exitCode === 0
                ? "training finished; checkpoint saved to /workspace/out\n"
                : `Traceback (most recent call last): RuntimeError (exit ${exitCode})\n`,
            );
          n.logs.close(key);
          const report = () =>
            n.outbox.add({
              key,
              job_id: a.job_id,
              attempt: a.attempt,
              fence: a.fence,
              status: exitCode === 0 ? "completed" : "failed",
              exit_code: exitCode,
              finished_at: new Date().toISOString(),
            });
          if (!(a.image || a.command) || exitCode !== 0) return report();
          // like a real workload: the container posts its outputs with its own token, then exits
          const outputs = {
            checkpoint: `s3://demo-checkpoints/${a.job_id.slice(0, 8)}/attempt-${a.attempt}`,
            train_loss: Math.round((1.2 + Math.random()) * 1000) / 1000,
            eval_score: Math.round((0.6 + Math.random() * 0.35) * 1000) / 1000,
          };
          void createClient({ baseUrl: list(opts.baseUrl), key: a.report_token, retryForMs: 10_000, fetch: transport })
            .call("POST", a.outputs_path, { outputs })
            .catch((e: unknown) => log(`outputs of job ${a.job_id}: ${(e as Error).message}`))
            .finally(report);
        },
        (a.duration_s ?? 300) * 1000,
      );
      n.jobs.set(key, { assignment: a, timers: [done, ...output] });
    }
  };

  /** One agent tick: exit reports first, then the heartbeat, whose answer says what to run. */
  const heartbeat = async (n: SimNode) => {
    if (!reachable(n)) return;
    await n.outbox.flush(n.client);
    const reply = await n.hot.call<HeartbeatReply>("POST", `/api/clusters/nodes/${n.id}/heartbeat`, {
      gpus: n.gpus.map((g) => ({ uuid: g.uuid, healthy: true, ...(g.xidPending ? { xid_errors: [g.xidPending] } : {}) })),
    });
    for (const g of n.gpus) g.xidPending = undefined;
    if (reachable(n)) reconcile(n, reply.assignments);
    if (reachable(n) && reply.handover)
      void handovers
        .onHeartbeat(
          { hostname: n.hostname, id: n.id, client: n.client, gpus: n.gpus, idle: () => n.jobs.size + n.replicas.size + n.pods.size === 0 },
          reply.handover,
        )
        .catch((e: unknown) => log(`${n.hostname} handover: ${(e as Error).message}`));
  };

  const sample = (n: SimNode, g: SimGpu, at: string) => {
    const target = g.jobId?.startsWith("replica:")
      ? 55 + noise(10)
      : g.jobId?.startsWith("pod:")
        ? 30 + noise(15)
        : g.jobId
          ? 90 + noise(8)
          : 2 + noise(2);
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
    if (!reachable(n)) return;
    const at = new Date().toISOString();
    n.lastMetrics = { metrics: n.gpus.map((g) => sample(n, g, at)) };
    await n.hot.call("POST", "/api/clusters/metrics", n.lastMetrics);
  };

  /** The node dies with its containers; what it ran is remembered to be reported interrupted when it is back. */
  const die = (n: SimNode) => {
    n.silent = true;
    for (const [key, run] of n.jobs) {
      for (const t of run.timers) clearTimeout(t);
      n.logs.close(key);
      freeGpus(n, key);
      n.outbox.add({
        key,
        job_id: run.assignment.job_id,
        attempt: run.assignment.attempt,
        fence: run.assignment.fence,
        status: "interrupted",
        exit_code: -1,
        error: "the node went down with its containers",
        finished_at: new Date().toISOString(),
      });
    }
    n.jobs.clear();
    for (const [id, r] of n.replicas) {
      r.closed = true;
      void r.server?.close();
      freeGpus(n, `replica:${id}`);
    }
    n.replicas.clear();
    for (const [key, p] of n.pods) {
      for (const l of p.listeners) l.close();
      n.logs.close(key);
      freeGpus(n, key);
    }
    n.pods.clear();
  };

  /** The agent process starts again: its state comes back from disk, and what it sent last goes out again. */
  const restart = async (n: SimNode) => {
    n.outbox = openOutbox(n, dirOf(n), log, opts.onExitReport);
    n.logs = new LogSpool(path.join(dirOf(n), "logs"), { log });
    for (const r of n.acked) n.outbox.add(r);
    n.acked = [];
    await register(n);
    if (n.lastMetrics && reachable(n)) await n.hot.call("POST", "/api/clusters/metrics", n.lastMetrics);
  };

  let bmcFleet: Awaited<ReturnType<typeof startSimBmcFleet>> | undefined;
  const ready = (async () => {
    // a few registrations at a time: a large fleet joins in seconds without a stampede
    // the first node the control plane refuses ends it: a fleet with holes in it is not the one asked for
    const queue = [...nodes];
    await Promise.all(
      Array.from({ length: Math.min(8, queue.length) }, async () => {
        for (let n = queue.shift(); n; n = queue.shift())
          await register(n).catch((e: unknown) => {
            queue.length = 0;
            throw new FleetRegistrationError(n, e);
          });
      }),
    );
    log(`registered ${nodes.length} node(s), ${nodes.length * 8} GPUs`);
    if (opts.bmc) {
      // a node powered off through its BMC dies; the boot after a power-on brings its agent back
      bmcFleet = await startSimBmcFleet(
        nodes,
        {
          powerOff: (h) => {
            const n = byHostname.get(h);
            if (n && !n.silent) die(n);
          },
          booted: (h, from, image) => {
            const n = byHostname.get(h);
            if (!n) return;
            log(`${h} booted from ${from}${image ? ` (${image})` : ""}`);
            void register(n).then(
              () => (n.silent = false),
              (e: unknown) => log(`${h} could not register after booting: ${(e as Error).message}`),
            );
          },
        },
        opts.bmc,
      );
      log(`${bmcFleet.bmcs.size} simulated BMC(s) serving Redfish`);
    }
    for (const n of nodes) {
      every(opts.heartbeatS ?? 10, () => heartbeat(n));
      every(opts.metricsS ?? 5, () => metrics(n));
    }
    // log chunks go where heartbeats and metrics go: the ingest servers when there are any
    every(2, () => Promise.all(nodes.filter(reachable).map((n) => n.logs.flush(n.hot))));
    every(opts.metricsS ?? 5, () => serve(opts.metricsS ?? 5));
  })();

  return {
    nodes,
    ready,
    /** which TPM the simulated nodes attest with: a software TPM each (swtpm), or the simulated one */
    tpmKind: handovers.tpmKind,
    injectFault(hostname: string, kind: FaultKind, gpuIndex = 0, xid = 79): boolean {
      const n = byHostname.get(hostname);
      if (!n) return false;
      const g = n.gpus[gpuIndex] ?? n.gpus[0]!;
      if (kind === "xid79") g.xidPending = 79;
      if (kind === "xid") g.xidPending = xid;
      if (kind === "overheat") g.overheat = true;
      if (kind === "silent" && !n.silent) die(n);
      if (kind === "partition") n.partitioned = true;
      if (kind === "restart") void restart(n).catch((e: unknown) => log(`restart of ${hostname}: ${(e as Error).message}`));
      if (kind === "implant" || kind === "wipe_fail" || kind === "clear") handovers.setFault(hostname, kind);
      if (kind === "clear") {
        // a node that died boots again: it registers before it says anything else
        if (n.silent)
          void register(n).then(
            () => (n.silent = false),
            (e: unknown) => log(`${hostname} could not register again: ${(e as Error).message}`),
          );
        n.partitioned = false;
        for (const x of n.gpus) x.overheat = false;
      }
      log(`fault ${kind} on ${hostname} GPU ${g.index}`);
      return true;
    },
    /** pushes one heartbeat and one metrics report of a node now (benchmarks use it to time faults) */
    async reportNow(hostname: string) {
      const n = byHostname.get(hostname);
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
    /** the simulated BMCs (with their passwords: they are the simulator's own) */
    bmcs: () => bmcFleet?.list() ?? [],
    bmcFault: (hostname: string, kind: SimBmcFault) => bmcFleet?.fault(hostname, kind) ?? Promise.resolve(false),
    stop() {
      stopped = true;
      void bmcFleet?.stop();
      for (const n of nodes) {
        for (const r of n.replicas.values()) void r.server?.close();
        for (const p of n.pods.values()) for (const l of p.listeners) l.close();
      }
      for (const t of timers) clearTimeout(t);
      for (const n of nodes) for (const run of n.jobs.values()) for (const t of run.timers) clearTimeout(t);
      transport.close();
    },
  };
}

export function simClusters(
  keys: Record<string, string>,
  layout: { pods: number; racksPerPod: number; nodesPerRack: number },
  gpuTypes = ["H100", "A100"],
): SimCluster[] {
  return Object.entries(keys).map(([clusterId, key], i) => {
    const gpuType = gpuTypes[i % gpuTypes.length]!;
    return { clusterId, key, gpuType, ...gpuProfile(gpuType), ...layout };
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
      bmc: { type: "boolean", default: process.env.SIM_BMC === "1" },
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
    ...(values.bmc ? { bmc: {} } : {}),
  });
  const port = Number(process.env.SIM_CONTROL_PORT ?? 0);
  if (port) {
    http
      .createServer((req, res) => {
        let body = "";
        req.on("data", (c) => (body += c));
        req.on("end", () => {
          if (req.method === "GET" && req.url === "/nodes") {
            res.end(
              JSON.stringify(sim.nodes.map((n) => ({ hostname: n.hostname, id: n.id, silent: n.silent, partitioned: n.partitioned }))),
            );
            return;
          }
          if (req.method === "GET" && req.url === "/bmcs") {
            res.end(JSON.stringify(sim.bmcs()));
            return;
          }
          if (req.method === "POST" && req.url === "/faults") {
            try {
              const f = JSON.parse(body) as { hostname: string; kind: FaultKind | `bmc_${SimBmcFault}`; gpu_index?: number; xid?: number };
              // bmc_unreachable, bmc_auth, bmc_media_refused, bmc_not_ready, bmc_task_fail, bmc_clear: the node's BMC
              if (f.kind.startsWith("bmc_")) {
                void sim
                  .bmcFault(f.hostname, f.kind.slice(4) as SimBmcFault)
                  .then((ok) => res.writeHead(ok ? 200 : 404).end(JSON.stringify({ ok })));
                return;
              }
              const ok = sim.injectFault(f.hostname, f.kind as FaultKind, f.gpu_index, f.xid);
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
