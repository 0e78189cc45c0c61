// The GPUForge node agent: installed on a GPU node by the control plane's install.sh (or run with
// `npm run agent` from a checkout). Configuration, from the environment (install.sh writes it to
// /etc/gpuforge/agent.env, mode 0600):
//   GPUFORGE_URL          control plane, e.g. https://gpuforge.example.com
//   GPUFORGE_AGENT_KEY    the cluster's (or this node's) agent key, gf_…; never given to workloads
//   GPUFORGE_INGEST_URL   optional: heartbeats, metrics and log chunks go to this ingest server (`npm run ingest`)
//   GPUFORGE_HOSTNAME     defaults to the machine's hostname; GPUFORGE_POD, GPUFORGE_RACK optional
//   GPUFORGE_SERVE_IMAGE  optional: the serving image for endpoints that name none
//   GPUFORGE_NODE_ADDRESS the IP the fleet reaches this node at (SSH to pods, the inference gateway
//                         to replicas); default: the first IPv4 address of a non-container interface
//   AGENT_PUBLISHED_PORTS host ports pods' and replicas' ports are published on (default 40000-44999)
//   GPUFORGE_PUBLISH_IP   optional: the one host address pods' SSH ports and the access guards of
//                         replicas' and pods' HTTP ports listen on (default all; the guards let
//                         only the inference gateway through, whatever the address)
//   HEARTBEAT_INTERVAL_S  default 15;  METRICS_INTERVAL_S default 10
//   AGENT_STATE_DIR       placements, unsent exit reports and log spools (default ~/.gpuforge-agent)
//   NVIDIA_SMI            path to nvidia-smi (default: found on PATH)
//   GPUFORGE_TPM_TCTI     the TPM for handovers' attestation (tpm2-tools' TCTI; default the kernel's
//                         /dev/tpmrm0); GPUFORGE_TPM_AK_HANDLE its persistent AK handle (0x81010002);
//                         GPUFORGE_EVENT_LOG the boot event log (default the kernel's securityfs copy)
// Tenant work runs only in containers (docker); a node without a container runtime registers
// without the capability and is given no work that runs an image or a command.
import { execFile } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { HeartbeatReply } from "../../lib/fleet/assignments";
import { ApiError, createClient } from "./client";
import { DockerLauncher, limitsFor } from "./container";
import { Lease } from "./lease";
import { LogSpool } from "./log-spool";
import {
  BASE_QUERY_FIELDS,
  NVIDIA_SMI_ARGS,
  NVIDIA_SMI_BASE_ARGS,
  NVIDIA_SMI_REMAP_ARGS,
  normaliseBusId,
  parseNvidiaSmi,
  parseRemappedRows,
  parseXidLines,
  type GpuReading,
} from "./nvidia-smi";
import { detectNodeAddress, readSystem } from "./node-info";
import { Outbox } from "./outbox";
import { PlacementBook, placementKey } from "./placement-book";
import { PodSupervisor } from "./pod-supervisor";
import { DEFAULT_PUBLISHED_PORTS, PortPool } from "./port-pool";
import { ReplicaSupervisor } from "./replica-supervisor";
import { jobsOf, podsOf, replicasOf, Runner } from "./runner";
import { hostHandover } from "./handover-host";
import { AGENT_VERSION } from "./version";

const run = promisify(execFile);
const env = process.env;
const log = (m: string) => process.stderr.write(`${new Date().toISOString()} agent: ${m}\n`);
const nvidiaSmi = env.NVIDIA_SMI ?? "nvidia-smi";

function required(name: string): string {
  const v = env[name];
  if (!v) {
    log(`${name} is not set`);
    process.exit(2);
  }
  return v;
}

let signalFields = true;
async function readGpus(): Promise<GpuReading[]> {
  let stdout: string;
  try {
    ({ stdout } = await run(nvidiaSmi, signalFields ? NVIDIA_SMI_ARGS : NVIDIA_SMI_BASE_ARGS, { timeout: 20_000 }));
  } catch (e) {
    if (!signalFields) throw e;
    // an older driver that does not know the ECC fields refuses the whole query: read without them
    signalFields = false;
    log(`nvidia-smi refused the ECC fields (${(e as Error).message.split("\n")[0]}); reading ${BASE_QUERY_FIELDS.length} fields only`);
    ({ stdout } = await run(nvidiaSmi, NVIDIA_SMI_BASE_ARGS, { timeout: 20_000 }));
  }
  const { gpus, skipped } = parseNvidiaSmi(stdout);
  for (const s of skipped) log(`nvidia-smi line ${s.line} skipped: ${s.reason}`);
  return gpus;
}

async function readRemapFailures(): Promise<Map<string, boolean>> {
  try {
    return parseRemappedRows((await run(nvidiaSmi, NVIDIA_SMI_REMAP_ARGS, { timeout: 20_000 })).stdout);
  } catch {
    return new Map(); // GPUs before Ampere have no row remapping
  }
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
  if (process.argv.includes("--version")) {
    console.log(`gpuforge-agent ${AGENT_VERSION}`);
    return;
  }
  const baseUrl = required("GPUFORGE_URL").replace(/\/$/, "");
  const key = required("GPUFORGE_AGENT_KEY");
  const heartbeatS = Number(env.HEARTBEAT_INTERVAL_S ?? 15);
  const metricsS = Number(env.METRICS_INTERVAL_S ?? 10);
  const client = createClient({ baseUrl, key, retryForMs: Infinity, log });
  // heartbeats, metrics and log chunks may go to a dedicated ingest server (`npm run ingest`); the rest to the app
  const hot = env.GPUFORGE_INGEST_URL
    ? createClient({ baseUrl: env.GPUFORGE_INGEST_URL.replace(/\/$/, ""), key, retryForMs: Infinity, log })
    : client;
  const hostname = env.GPUFORGE_HOSTNAME ?? os.hostname();
  const stateDir = env.AGENT_STATE_DIR ?? path.join(os.homedir(), ".gpuforge-agent");
  const book = new PlacementBook(path.join(stateDir, "placements.json"));
  const outbox = new Outbox(path.join(stateDir, "exit-reports.json"), log);
  const logs = new LogSpool(path.join(stateDir, "logs"), { log });
  const launcher = new DockerLauncher();
  const ports = PortPool.parse(env.AGENT_PUBLISHED_PORTS ?? DEFAULT_PUBLISHED_PORTS);
  const publishIp = env.GPUFORGE_PUBLISH_IP || undefined;
  let address = detectNodeAddress(env.GPUFORGE_NODE_ADDRESS);

  let gpus = await readGpus();
  const engine = launcher.runtime();
  const networkProblem = engine ? launcher.prepareNetwork() : null;
  const runtime = networkProblem ? null : engine;
  if (!engine) log("no container runtime answers (docker): this node registers without containers and runs no tenant images or commands");
  if (networkProblem) log(`${networkProblem}: this node registers without containers and runs no tenant images or commands`);
  const system = { ...(await readSystem(nvidiaSmi)), ...(gpus[0]?.driverVersion ? { driver_version: gpus[0].driverVersion } : {}) };
  const register = () =>
    client.call<{ node: { id: string }; gpus: Array<{ id: string; uuid: string; index: number }> }>("POST", "/api/clusters/nodes", {
      hostname,
      pod: env.GPUFORGE_POD,
      rack: env.GPUFORGE_RACK,
      cpu_cores: os.cpus().length,
      memory_gb: Math.round(os.totalmem() / 2 ** 30),
      agent_version: AGENT_VERSION,
      ...(address ? { address } : {}),
      capabilities: { containers: runtime !== null, ...(runtime ? { runtime } : {}) },
      system,
      gpus: gpus.map((g) => ({ uuid: g.uuid, index: g.index, gpu_type: g.gpuType, model: g.name, memory_total_mb: g.memoryTotalMb })),
    });
  const registration = await register().catch((e: unknown) => {
    // an address only found on an interface, which the control plane does not take (outside its
    // NODE_ADDRESS_NETWORKS, or another node's): the node still registers, without one. A configured
    // GPUFORGE_NODE_ADDRESS that is refused stops the agent instead, so the mistake is seen.
    if (!address || env.GPUFORGE_NODE_ADDRESS?.trim() || !addressRefused(e)) throw e;
    log(
      `the control plane refused the detected address ${address} (${(e as Error).message}); registering without one. Set GPUFORGE_NODE_ADDRESS to the address the fleet reaches this node at`,
    );
    address = undefined;
    return register();
  });
  const nodeId = registration.node.id;
  const indexById = new Map(registration.gpus.map((g) => [g.id, g.index]));
  log(
    `registered ${hostname} as node ${nodeId} at ${address ?? "no address (pods' SSH and the inference gateway cannot reach it)"} with ${gpus.length} GPU(s)${runtime ? `, running containers with ${runtime}` : ""}`,
  );

  const node = { gpus: Math.max(1, gpus.length), cpuCores: os.cpus().length, memoryMb: Math.floor(os.totalmem() / 2 ** 20) };
  const limits = (n: number) => limitsFor(n, node);
  const gpuIndexOf = (id: string) => indexById.get(id);
  const runner = new Runner({ book, outbox, logs, launcher, gpuIndexOf, limits, baseUrl, log });
  runner.resume();
  const replicas = new ReplicaSupervisor({
    launcher,
    logs,
    baseUrl,
    serveImage: env.GPUFORGE_SERVE_IMAGE || undefined,
    gpuIndexOf,
    limits,
    reportUnhealthy: (a) =>
      client
        .call(
          "POST",
          a.metrics_path,
          {
            samples: [
              { replica_id: a.replica_id, fence: a.fence, requests: 0, errors: 0, p50_ms: 0, p95_ms: 0, p99_ms: 0, healthy: false },
            ],
          },
          60_000,
        )
        .then(() => {}),
    ports,
    guardHost: publishIp,
    reportAddress: (a, hostPort) =>
      client.call("POST", a.address_path, { attempt: a.attempt, fence: a.fence, host_port: hostPort }, 60_000).then(() => {}),
    log,
  });
  const pods = new PodSupervisor({
    launcher,
    logs,
    book,
    ports,
    stateDir,
    gpuIndexOf,
    limits,
    publishIp,
    guardHost: publishIp,
    send: (statusPath, report) => client.call("POST", statusPath, report, 0).then(() => {}),
    log,
  });
  let resumedPods = false;
  // wipes and attestations between tenants, when a heartbeat asks for them (agent/src/handover.ts)
  const handover = hostHandover({
    client,
    nodeId,
    stateDir,
    nvidiaSmi,
    gpus: () => gpus.map((g) => ({ uuid: g.uuid, index: g.index })),
    idle: () => runner.running.length === 0 && replicas.replicaIds.length === 0 && pods.running.length === 0,
    log,
  });

  // The lease: while heartbeats reach the control plane the work here is this node's; once they
  // have not for lease_s, the control plane has moved it, so it stops here (self-fencing).
  const lease = new Lease(Date.now());
  let stopping = false;

  const heartbeat = async () => {
    // what the node's work printed, then how it ended, and only then what it should run now: a
    // finished placement is never handed back by a heartbeat that raced its report
    await logs.flush(hot);
    await outbox.flush(client);
    const xids = await readXids(heartbeatS * 2);
    const remap = await readRemapFailures();
    const byBus = new Map<string, number[]>();
    for (const x of xids) byBus.set(x.busId, [...(byBus.get(x.busId) ?? []), x.xid]);
    const reply = await hot.call<HeartbeatReply>(
      "POST",
      `/api/clusters/nodes/${nodeId}/heartbeat`,
      {
        gpus: gpus.map((g) => ({
          uuid: g.uuid,
          healthy: g.temperatureC !== null || g.utilizationPct !== null,
          ...(g.pciBusId && byBus.get(normaliseBusId(g.pciBusId)) ? { xid_errors: byBus.get(normaliseBusId(g.pciBusId)) } : {}),
          ...(g.eccUncorrected !== null ? { ecc_uncorrected: g.eccUncorrected } : {}),
          ...(remap.has(g.uuid) ? { remap_failure: remap.get(g.uuid) } : {}),
        })),
      },
      Math.max(heartbeatS * 2, 10) * 1000,
    );
    if (lease.renew(Date.now(), reply.lease_s))
      log("lease renewed: the control plane hears this node again; reporting what was stopped while it could not");
    runner.reconcile(jobsOf(reply.assignments));
    replicas.reconcile(replicasOf(reply.assignments));
    if (!resumedPods) pods.resume(podsOf(reply.assignments));
    resumedPods = true;
    pods.reconcile(podsOf(reply.assignments));
    await pods.flush();
    book.forget(new Set(reply.assignments.map(placementKey)), (k) => outbox.has(k) || logs.has(k) || pods.hasUnsent(k));
    void handover.onHeartbeat(reply.handover);
  };

  const watchLease = async () => {
    if (!lease.lapsed(Date.now())) return;
    const why = `the node lost its lease: no heartbeat reached the control plane for ${lease.silentForS(Date.now())} s, so its work has been moved elsewhere`;
    log(`${why}; stopping everything this node runs`);
    runner.interruptAll(why);
    replicas.stopAll("lease lapsed");
    pods.interruptAll(why);
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
    // containers keep running: the next agent process finds them again (an upgrade does not stop work)
    log(`stopping; ${runner.running.length} job(s) keep running in their containers for the next agent process`);
    setTimeout(() => process.exit(0), 200);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
  await Promise.all([
    loop(heartbeat, heartbeatS, "heartbeat"),
    loop(metrics, metricsS, "metrics"),
    loop(watchLease, 1, "lease"),
    loop(() => logs.flush(hot).then(() => {}), 2, "logs"),
    loop(async () => (replicas.announceAll(), await pods.tick()), 2, "pods"),
  ]);
}

main().catch((e: unknown) => {
  log((e as Error).message);
  process.exit(1);
});

/** A registration refused because of its address field (400 naming it, or 409: another node has it). */
function addressRefused(e: unknown): boolean {
  if (!(e instanceof ApiError) || (e.status !== 400 && e.status !== 409)) return false;
  const details = (e.body as { error?: { details?: Array<{ path?: string }> } } | null)?.error?.details ?? [];
  return details.some((d) => d.path === "address");
}
