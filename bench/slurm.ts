// `npm run bench:slurm`: a Slurm cluster run through its bridge, against the same Slurm used
// directly. It starts a Slurm of its own (slurmctld and one slurmd per node on this host, munge,
// through scripts/lib/slurm-sandbox.ts), the production build on a fresh database, and the bridge
// (npm run slurm-bridge) polling every SLURM_POLL_INTERVAL_S (1 s here; 10 s by default in
// production). Prints one JSON object:
//   nodes, gpus                      the Slurm cluster: NODES nodes of 8 GPUs (GRES on device files)
//   mirror.first_ms                  bridge start → every node registered and available in GPUForge
//   mirror.refresh_p50_ms / _p99_ms  a node's Slurm state changes (scontrol drain, then resume) →
//                                    GPUForge's node reads it (draining, then available): what an
//                                    operator waits for the fleet floor to follow Slurm
//   mirror.cycle_p50_ms / _p99_ms    one bridge cycle (sinfo + scontrol show node + squeue, parse,
//                                    one heartbeat per node, reports) as its log times it
//                                    (SLURM_BRIDGE_LOG_CYCLES=1)
//   submit.plain_sbatch_p50_ms / _p99_ms   `sbatch -w NODE --gres=gpu:1` → squeue reads RUNNING
//   submit.gpuforge_p50_ms / _p99_ms       POST /api/jobs → the same Slurm's squeue reads the job
//                                    RUNNING (placed by GPUForge, submitted by the bridge)
//   submit.gpuforge_reported_p50_ms / _p99_ms   POST /api/jobs → GPUForge's API reads Slurm's RUNNING
//   submit.overhead_p50_ms           gpuforge_p50 − plain_sbatch_p50
// BENCH_SMOKE=1: 2 nodes and 3 samples of each (a check that it runs, not a figure).
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { systemActor } from "@/lib/auth/principal";
import { db, disconnectDb } from "@/lib/db/client";
import { createTenant } from "@/lib/tenants/create-tenant";
import { startSlurmSandbox, type SlurmSandbox } from "../scripts/lib/slurm-sandbox";
import { startBridge, type RunningBridge } from "../tests/support/slurm-bridge";
import { ensureSystemTool } from "../tests/support/system-packages";
import { percentile, round, withBenchStack } from "./lib/harness";
import { flag, printFigures, SMOKE } from "./lib/report";

const NODES = SMOKE ? 2 : Number(process.env.BENCH_SLURM_NODES ?? 8);
const SAMPLES = SMOKE ? 3 : Number(process.env.BENCH_SLURM_SAMPLES ?? 20);
const POLL_S = Number(process.env.SLURM_POLL_INTERVAL_S ?? 1);
const GPU_TYPE = "H100";

const stats = (name: string, ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return { [`${name}_p50_ms`]: round(percentile(s, 50)), [`${name}_p99_ms`]: round(percentile(s, 99)) };
};

/** Polls (every 20 ms, so the figure is the thing measured, not the poll) until `probe` holds. */
async function until(probe: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const squeueState = async (slurm: SlurmSandbox, pick: (comment: string, id: string) => boolean) => {
  const out = (await slurm.tool("squeue", ["-h", "-a", "-t", "all", "-o", "%A|%T|%k"])).stdout;
  for (const line of out.split("\n")) {
    const [id, state, ...comment] = line.split("|");
    if (id && pick(comment.join("|"), id)) return state!;
  }
  return null;
};

async function main() {
  ensureSystemTool("slurm", "munge");
  const slurm = await startSlurmSandbox({
    nodes: Array.from({ length: NODES }, (_, i) => ({ name: `bn${i + 1}`, gpus: 8, cpus: 4 })),
    containers: true,
  });
  const stateDir = mkdtempSync(path.join(os.tmpdir(), "gf-bench-bridge-"));
  let bridge: RunningBridge | undefined;
  try {
    return await withBenchStack(({ baseUrl }) =>
      // the bridge stops before the app it reports to, and the database's clients before it goes
      measure(slurm, baseUrl, stateDir, (b) => (bridge = b)).finally(async () => {
        await bridge?.stop();
        await disconnectDb();
      }),
    );
  } finally {
    await bridge?.stop();
    await slurm.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

async function measure(slurm: SlurmSandbox, baseUrl: string, stateDir: string, started: (b: RunningBridge) => void) {
  const operator = (await createApiKey(systemActor, { name: "bench-slurm-operator", scope: "operator" })).key;
  const created = await fetch(`${baseUrl}/api/clusters`, {
    method: "POST",
    headers: { authorization: `Bearer ${operator}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench-slurm", kind: "slurm" }),
  }).then((r) => r.json() as Promise<{ cluster: { id: string } }>);
  const clusterId = created.cluster.id;
  const agentKey = (await createApiKey(systemActor, { name: "bench-slurm-bridge", scope: "agent", cluster_id: clusterId })).key;
  const tenant = await createTenant(systemActor, { name: "bench-slurm-tenant", gpu_quota: 1000, billing_email: null });
  const tenantKey = (await createApiKey(systemActor, { name: "bench-slurm-tenant", scope: "tenant", tenant_id: tenant.id })).key;
  const nodeStatus = async () => db().node.findMany({ where: { clusterId }, select: { id: true, hostname: true, status: true } });

  // the first mirror: nothing in GPUForge until the bridge has read Slurm and registered each node
  const t0 = performance.now();
  const bridge = startBridge({
    slurm,
    baseUrl,
    key: agentKey,
    stateDir,
    env: { SLURM_GPU_TYPES: `h100=${GPU_TYPE}`, SLURM_POLL_INTERVAL_S: String(POLL_S), SLURM_BRIDGE_LOG_CYCLES: "1" },
  });
  started(bridge);
  await until(
    async () => {
      const n = await nodeStatus();
      return n.length === NODES && n.every((x) => x.status === "available");
    },
    120_000,
    `${NODES} mirrored nodes\n${bridge.log()}`,
  );
  const firstMs = performance.now() - t0;

  // refresh: Slurm's own state changes, GPUForge follows
  const refresh: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const host = `bn${(i % NODES) + 1}`;
    const id = (await nodeStatus()).find((n) => n.hostname === host)!.id;
    const status = async () => (await db().node.findUniqueOrThrow({ where: { id }, select: { status: true } })).status;
    let t = performance.now();
    await slurm.tool("scontrol", ["update", `nodename=${host}`, "state=drain", "reason=bench: drained by Slurm's admin"]);
    await until(async () => (await status()) === "draining", 60_000, `${host} draining`);
    refresh.push(performance.now() - t);
    t = performance.now();
    await slurm.tool("scontrol", ["update", `nodename=${host}`, "state=resume"]);
    await until(async () => (await status()) === "available", 60_000, `${host} available`);
    refresh.push(performance.now() - t);
  }

  // plain sbatch on the same Slurm: exactly one node, one GPU, until squeue reads RUNNING
  const plain: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    const r = await slurm.tool("sbatch", [
      "--parsable",
      "-w",
      `bn${(i % NODES) + 1}`,
      "--gres=gpu:1",
      "--time=5",
      `--output=${slurm.outputDir}/bench-%j.out`,
      "--wrap=sleep 1",
    ]);
    const id = r.stdout.trim().split(";")[0]!;
    await until(async () => (await squeueState(slurm, (_, jid) => jid === id)) !== "PENDING", 60_000, `plain job ${id}`);
    plain.push(performance.now() - t);
    await until(
      async () => !/PENDING|RUNNING|COMPLETING/.test((await squeueState(slurm, (_, jid) => jid === id)) ?? ""),
      60_000,
      "plain end",
    );
  }

  // through GPUForge: the scheduler places, the bridge submits, the same Slurm runs
  const through: number[] = [];
  const reported: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    const res = await fetch(`${baseUrl}/api/jobs`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenantKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        name: `bench-${i}`,
        gpu_count: 1,
        gpu_type: GPU_TYPE,
        cluster_id: clusterId,
        priority: 1,
        max_retries: 0,
        image: "busybox:latest",
        command: "sleep 1",
        duration_s: 300,
      }),
    });
    if (res.status !== 201) throw new Error(`submit: ${res.status} ${await res.text()}`);
    const jobId = ((await res.json()) as { job: { id: string } }).job.id;
    await until(async () => (await squeueState(slurm, (c) => c.includes(jobId))) === "RUNNING", 60_000, `job ${jobId} RUNNING`);
    through.push(performance.now() - t);
    await until(
      async () => {
        const s = (await fetch(`${baseUrl}/api/jobs/${jobId}/slurm`, { headers: { authorization: `Bearer ${tenantKey}` } }).then((r) =>
          r.json(),
        )) as { data: Array<{ state: string }> };
        return ["RUNNING", "COMPLETING", "COMPLETED"].includes(s.data[0]?.state ?? "");
      },
      60_000,
      `job ${jobId} reported`,
    );
    reported.push(performance.now() - t);
    await until(
      async () => (await db().job.findUniqueOrThrow({ where: { id: jobId }, select: { status: true } })).status !== "running",
      60_000,
      `job ${jobId} end`,
    );
  }

  const cycles = bridge.lines
    .map((l) => /cycle (\d+(?:\.\d+)?) ms/.exec(l)?.[1])
    .filter((x): x is string => Boolean(x))
    .map(Number);
  const p = (xs: number[]) =>
    round(
      percentile(
        [...xs].sort((a, b) => a - b),
        50,
      ),
    );
  // which Slurm it ran against, beside the figures (on stderr: figures are numbers)
  console.error(`[bench:slurm] ${(await slurm.tool("sinfo", ["-V"])).stdout.trim()}`);
  return {
    smoke: flag(SMOKE),
    nodes: NODES,
    gpus: NODES * 8,
    poll_interval_s: POLL_S,
    samples: SAMPLES,
    mirror: { first_ms: round(firstMs), ...stats("refresh", refresh), ...(cycles.length ? stats("cycle", cycles) : {}) },
    submit: {
      ...stats("plain_sbatch", plain),
      ...stats("gpuforge", through),
      ...stats("gpuforge_reported", reported),
      overhead_p50_ms: round(p(through) - p(plain)),
    },
    cores: os.cpus().length,
    load_average: round(os.loadavg()[0]!, 1),
  };
}

printFigures(await main());
process.exit(0);
