// `npm run bench:burst`: burst to GPU providers in the simulator. Prints one JSON object:
//   burst.*      jobs of a burst tenant wait while the local fleet is full; for each, the time from
//                "waiting beyond BURST_WAIT_S" (its wait began + the threshold) to "running on a
//                provider node" (placed there), with the burst cycle and the scheduler run every
//                CYCLE_MS as the background driver would, a RunPod stand-in that boots each
//                instance by starting a simulated node agent (heartbeat every HEARTBEAT_S) with the
//                environment the start script gives it: p50/p90/max, and the same split into
//                launch → joined (the agent registered and its first heartbeat made the node
//                available) → placed
//   refresh.*    offers refreshed per second: the refresh's one set-based statement per provider
//                against a naive refresh (one upsert statement per offer, as a loop over the
//                provider's answer would write it), OFFERS offers, alternating runs, same database
// BENCH_SMOKE=1 runs a few jobs and a few hundred offers (seconds, not minutes): the bench still runs.
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ensureDatabase, freePort, startEmbeddedDatabase } from "../scripts/lib/embedded-db";
import { runMigrations } from "../scripts/lib/run-migrations";
import { percentile, round } from "./lib/harness";
import { flag, printFigures, SMOKE } from "./lib/report";

const JOBS = Number(process.env.BENCH_BURST_JOBS ?? (SMOKE ? 2 : 12));
const OFFERS = Number(process.env.BENCH_OFFERS ?? (SMOKE ? 300 : 5_000));
const RUNS = SMOKE ? 1 : 3;
const CYCLE_MS = 250;
const HEARTBEAT_S = 1;

async function main() {
  const tempDir = mkdtempSync(path.join(os.tmpdir(), "gpuforge-bench-burst-"));
  const server = process.env.DATABASE_URL
    ? { serverUrl: process.env.DATABASE_URL, discard: async () => {} }
    : await startEmbeddedDatabase({ dataDir: path.join(tempDir, "pg"), port: await freePort(), ephemeral: true, log: () => {} });
  const databaseUrl = await ensureDatabase(server.serverUrl, `gpuforge_bench_${Date.now().toString(36)}`);
  await runMigrations(databaseUrl);
  const { startRunpodStandIn } = await import("../tests/support/provider-standins/runpod");
  const { startAgentApi } = await import("../tests/support/agent-api");
  const { bootSimulatedInstance } = await import("../agent/src/sim-provider-instance");
  const agents: Array<{ stop(): void }> = [];
  const runpod = await startRunpodStandIn({
    bootMs: 0,
    dataCenters: ["US-KS-2"],
    stock: { "US-KS-2": { "NVIDIA H100 80GB HBM3": 1_000 } },
    gpus: [{ id: "NVIDIA H100 80GB HBM3", displayName: "H100", memoryInGb: 80, maxGpuCount: 8, securePrice: 2.99, secureSpotPrice: null }],
    onBoot: (b) =>
      void agents.push(
        bootSimulatedInstance({ env: b.env, gpuType: "H100", gpuCount: b.gpuCount, stateDir: tempDir, heartbeatS: HEARTBEAT_S }),
      ),
  });
  const api = await startAgentApi();
  Object.assign(process.env, {
    DATABASE_URL: databaseUrl,
    NEXTAUTH_SECRET: "bench-secret-0123456789abcdef0123456789",
    NEXTAUTH_URL: api.url,
    NODE_ENV: "production",
    LOG_LEVEL: "warn",
    RUNPOD_API_KEY: runpod.key,
    RUNPOD_API_URL: runpod.url,
    BURST_WAIT_S: "2",
    BURST_IDLE_S: "600",
    BURST_TENANT_HOURLY_CAP_CENTS: "100000000",
    BURST_TENANT_DAILY_CAP_CENTS: "100000000",
    RUNPOD_DAILY_CAP_CENTS: "100000000",
    // the simulated agents register from loopback addresses
    NODE_ADDRESS_NETWORKS: "127.0.0.0/8",
    // instances install the signed bundle: a launch hands them the public key (a key of this run's own)
    BUNDLE_SIGNING_KEY: generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
  });
  try {
    const burst = await benchBurst();
    const refresh = await benchRefresh();
    printFigures({ smoke: flag(SMOKE), burst, refresh });
  } finally {
    for (const a of agents) a.stop();
    await api.close();
    await runpod.close();
    const { disconnectDb } = await import("@/lib/db/client");
    await disconnectDb();
    await server.discard();
    rmSync(tempDir, { recursive: true, force: true });
  }
}

async function benchBurst() {
  const { db } = await import("@/lib/db/client");
  const { systemActor } = await import("@/lib/auth/principal");
  const { submitJob } = await import("@/lib/jobs/submit-job");
  const { registerNode } = await import("@/lib/fleet/register-node");
  const { recordHeartbeat } = await import("@/lib/fleet/record-heartbeat");
  const { createCluster } = await import("@/lib/fleet/create-cluster");
  const { createTenant } = await import("@/lib/tenants/create-tenant");
  const { updateTenant } = await import("@/lib/tenants/update-tenant");
  const { runBurstCycle } = await import("@/lib/burst/run-burst");
  const { runSchedulerCycle } = await import("@/lib/scheduler/run-cycle");
  const { refreshAllOffers } = await import("@/lib/providers/refresh-offers");
  const env = (await import("@/lib/env")).env();

  // the local fleet: one full 8-GPU node
  const cluster = await createCluster(systemActor, { name: "local", region: "here" });
  const agent = {
    principal: { kind: "agent" as const, clusterId: cluster.id, keyId: "00000000-0000-4000-8000-000000000001", label: "bench" },
  };
  const { node } = await registerNode(agent, {
    hostname: "local-1",
    capabilities: { containers: true, runtime: "bench" },
    gpus: Array.from({ length: 8 }, (_, i) => ({ uuid: `GPU-local-${i}`, index: i, gpu_type: "H100", memory_total_mb: 81559 })),
  });
  await recordHeartbeat(agent, node.id, {});
  const busy = await createTenant(systemActor, { name: "busy", gpu_quota: 8, billing_email: null });
  await submitJob(systemActor, { tenant_id: busy.id, name: "local", gpu_count: 8, gpu_type: "H100", priority: 1, max_retries: 0 });
  await runSchedulerCycle("bench");
  const tenant = await createTenant(systemActor, { name: "bursty", gpu_quota: 10_000, billing_email: null });
  await updateTenant(systemActor, tenant.id, { burst: { enabled: true, max_price_cents_per_gpu_hour: 1_000 } });
  await refreshAllOffers();

  const jobs = [];
  for (let i = 0; i < JOBS; i++)
    jobs.push(
      await submitJob(systemActor, {
        tenant_id: tenant.id,
        name: `burst-${i}`,
        gpu_count: 1 + (i % 2),
        gpu_type: "H100",
        priority: 5,
        max_retries: 0,
        duration_s: 3_600,
      }),
    );
  const deadline = Date.now() + 120_000 + JOBS * 5_000;
  for (;;) {
    const t0 = performance.now();
    await runBurstCycle();
    await runSchedulerCycle("bench");
    const running = await db().job.count({ where: { id: { in: jobs.map((j) => j.id) }, status: "running" } });
    if (running === jobs.length) break;
    if (Date.now() > deadline) throw new Error(`only ${running} of ${jobs.length} jobs reached provider capacity`);
    await new Promise((r) => setTimeout(r, Math.max(0, CYCLE_MS - (performance.now() - t0))));
  }
  const total: number[] = [];
  const launch: number[] = [];
  const join: number[] = [];
  const place: number[] = [];
  for (const j of jobs) {
    const row = await db().job.findUniqueOrThrow({ where: { id: j.id }, select: { submittedAt: true, startedAt: true } });
    const inst = await db().providerInstance.findFirstOrThrow({ where: { jobId: j.id } });
    // the node joined when its agent's first heartbeat made it available (the scheduler may use it before the burst cycle notes it)
    const joined = await db().nodeEvent.findFirstOrThrow({
      where: { nodeId: inst.nodeId!, toStatus: "available" },
      orderBy: { id: "asc" },
    });
    const threshold = row.submittedAt.getTime() + env.BURST_WAIT_S * 1000;
    total.push(row.startedAt!.getTime() - threshold);
    launch.push(inst.launchedAt!.getTime() - threshold);
    join.push(joined.createdAt.getTime() - inst.launchedAt!.getTime());
    place.push(row.startedAt!.getTime() - joined.createdAt.getTime());
  }
  const s = (xs: number[]) => {
    const v = [...xs].sort((a, b) => a - b);
    return { p50_ms: round(percentile(v, 50)), p90_ms: round(percentile(v, 90)), max_ms: round(v.at(-1) ?? 0) };
  };
  return {
    jobs: JOBS,
    cycle_ms: CYCLE_MS,
    agent_heartbeat_s: HEARTBEAT_S,
    threshold_to_running: s(total),
    threshold_to_launched: s(launch),
    launched_to_joined: s(join),
    joined_to_running: s(place),
  };
}

async function benchRefresh() {
  const { pool } = await import("@/lib/db/client");
  const { run } = await import("@/lib/db/statement");
  const { refreshProviderOffers } = await import("@/lib/providers/refresh-offers");
  const { UPSERT_ONE_OFFER } = await import("@/lib/providers/statements");
  const { mapGpuType } = await import("@/lib/providers/gpu-types");
  const names = ["H100 SXM", "A100 PCIE", "RTX 4090", "L40S", "RTX 3090"];
  const offers = Array.from({ length: OFFERS }, (_, i) => ({
    offerId: String(1_000_000 + i),
    providerGpuType: names[i % names.length]!,
    gpuCount: 1 + (i % 8),
    region: ["US", "SE", "CA", "DE"][i % 4]!,
    interruptible: i % 3 === 0,
    costCentsPerGpuHour: 40 + (i % 300),
  }));
  const adapter = {
    name: "vast" as const,
    listOffers: async () => offers,
    launch: () => Promise.reject(new Error("not in this bench")),
    status: () => Promise.reject(new Error("not in this bench")),
    terminate: () => Promise.reject(new Error("not in this bench")),
    listInstances: async () => [],
  };
  const setBased: number[] = [];
  const naive: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    // alternate, so drift in the machine's load hits both
    let t0 = performance.now();
    await refreshProviderOffers("vast", adapter);
    setBased.push(OFFERS / ((performance.now() - t0) / 1000));
    t0 = performance.now();
    const at = new Date();
    const overrides = new Map<string, string | null>();
    for (const o of offers)
      await run(pool(), UPSERT_ONE_OFFER, [
        "vast",
        o.offerId,
        o.providerGpuType,
        mapGpuType(o.providerGpuType, overrides),
        o.gpuCount,
        o.region,
        o.interruptible,
        o.costCentsPerGpuHour,
        at,
      ]);
    naive.push(OFFERS / ((performance.now() - t0) / 1000));
  }
  const best = (xs: number[]) => round(Math.max(...xs));
  return {
    offers: OFFERS,
    runs: RUNS,
    set_based_offers_per_s: best(setBased),
    naive_offers_per_s: best(naive),
    speedup: round(Math.max(...setBased) / Math.max(...naive)),
  };
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
