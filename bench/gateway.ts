// `npm run bench:gateway`: what the inference gateway adds to a call. Prints one JSON object:
//   max_requests_per_s             closed loop (BENCH_GATEWAY_CONCURRENCY callers) through the gateway
//   rate                           the open-loop rate of the latency runs (BENCH_GATEWAY_RATE, 1,000/s)
//   direct_p50_ms, direct_p99_ms   the same calls straight to a replica's model server, same run
//   gateway_p50_ms, gateway_p99_ms through the gateway: key check, least-outstanding pick, proxying
//   added_p50_ms, added_p99_ms     gateway minus direct (the target: added p99 under 5 ms at 1,000/s)
// One process: a migrated database (embedded, or DATABASE_URL's server), two replicas served by the
// agent's small model server (no artificial latency) on loopback node addresses, a Gateway on
// plain node:http as `npm run gateway` runs it, and the load generator. Load and gateway share
// this machine's CPUs, as they would on one host; the direct calls pay the same client costs.
// BENCH_SMOKE=1: 200 calls/s for 1 s, 20 warm-up pairs, 1 s of closed loop.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { dropDatabase, ensureDatabase, freePort, startEmbeddedDatabase } from "../scripts/lib/embedded-db";
import { runMigrations } from "../scripts/lib/run-migrations";
import { percentile, round } from "./lib/harness";
import { benchSize, printFigures } from "./lib/report";

const RATE = benchSize("BENCH_GATEWAY_RATE", 1000, 200);
const SECONDS = benchSize("BENCH_GATEWAY_SECONDS", 10, 1);
const CONCURRENCY = benchSize("BENCH_GATEWAY_CONCURRENCY", 64, 8);
const WARM_UP_PAIRS = benchSize("BENCH_GATEWAY_WARM_UP", 500, 20);
const CLOSED_LOOP_S = benchSize("BENCH_GATEWAY_CLOSED_S", 5, 1);

const tempDir = mkdtempSync(path.join(os.tmpdir(), "gpuforge-bench-gw-"));
const dbName = `gpuforge_bench_gw_${Date.now().toString(36)}`;
const external = process.env.DATABASE_URL;
const pg = external
  ? { serverUrl: external, discard: () => dropDatabase(external, dbName) }
  : await startEmbeddedDatabase({ dataDir: path.join(tempDir, "pg"), port: await freePort(), ephemeral: true, log: () => {} });
const databaseUrl = await ensureDatabase(pg.serverUrl, dbName);
await runMigrations(databaseUrl);
Object.assign(process.env, {
  DATABASE_URL: databaseUrl,
  NODE_ADDRESS_NETWORKS: "127.0.0.0/8",
  // the model servers take whatever port the machine gives them
  AGENT_PUBLISHED_PORTS: "1024-65535",
  LOG_LEVEL: "warn",
  NEXTAUTH_SECRET: process.env.NEXTAUTH_SECRET ?? "bench-secret-0123456789abcdef0123456789",
});

// the app's modules read their configuration on first use: imported once the database exists
const { systemActor } = await import("@/lib/auth/principal");
const { createApiKey } = await import("@/lib/api-keys/create-api-key");
const { createCluster } = await import("@/lib/fleet/create-cluster");
const { registerNode } = await import("@/lib/fleet/register-node");
const { recordHeartbeat } = await import("@/lib/fleet/record-heartbeat");
const { createTenant } = await import("@/lib/tenants/create-tenant");
const { createEndpoint } = await import("@/lib/endpoints/create-endpoint");
const { reportReplicaAddress } = await import("@/lib/endpoints/report-replica-address");
const { Gateway } = await import("@/lib/gateway/gateway");
const { createGatewayServer } = await import("../scripts/gateway-server");
const { startModelServer } = await import("../agent/src/model-server");
const { db, disconnectDb } = await import("@/lib/db/client");

const cluster = await createCluster(systemActor, { name: "bench-gateway", region: "bench", provider: "bench" });
const agentKey = await createApiKey(systemActor, { name: "bench-gw-agent", scope: "agent", cluster_id: cluster.id });
const agent = { principal: { kind: "agent" as const, clusterId: cluster.id, keyId: agentKey.apiKey.id, label: "bench" } };
for (let i = 0; i < 2; i++) {
  const reg = await registerNode(agent as never, {
    hostname: `bench-gw-${i}`,
    address: `127.77.0.${i + 1}`,
    capabilities: { containers: true, runtime: "bench" },
    gpus: [{ uuid: `GPU-bench-gw-${i}`, index: 0, gpu_type: "BENCHGW", memory_total_mb: 81_920 }],
  });
  await recordHeartbeat(agent as never, reg.node.id, {});
}
const tenant = await createTenant(systemActor, { name: "bench-gateway", gpu_quota: 8, billing_email: null });
const tenantKey = (await createApiKey(systemActor, { name: "bench-gw-tenant", scope: "tenant", tenant_id: tenant.id })).key;
const asT = { principal: { kind: "tenant" as const, tenantId: tenant.id, role: "tenant_admin" as const, label: "bench" } };
const ep = await createEndpoint(asT, {
  name: "bench-chat",
  model: "bench/chat",
  gpu_type: "BENCHGW",
  gpus_per_replica: 1,
  replicas: 2,
  cluster_id: cluster.id,
  autoscale_metric: "none",
  cooldown_s: 300,
});
const replicas = ep.replicas.filter((r) => r.status !== "stopped");
if (replicas.length !== 2) throw new Error(`expected 2 replicas placed, got ${replicas.length}`);
const servers = [];
for (const r of replicas) {
  const node = await db().node.findUniqueOrThrow({ where: { id: r.nodeId! } });
  const s = await startModelServer({ model: "bench/chat", host: node.address!, complete: () => "ok" });
  servers.push(s);
  await reportReplicaAddress(
    { kind: "agent", clusterId: cluster.id, nodeId: r.nodeId!, keyId: agentKey.apiKey.id, label: "bench" } as never,
    ep.id,
    r.id,
    { attempt: 1, fence: r.fence, host_port: s.port },
  );
}

const g = await new Gateway({
  refreshMs: 1_000,
  probeIntervalMs: 5_000,
  flushMs: 600_000,
  timeoutS: 30,
  idleTimeoutS: 30,
  maxBodyBytes: 64 * 1024,
}).start();
await g.probeNow();
const server = createGatewayServer(g, "http://127.0.0.1");
await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
const gatewayUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/endpoints/${ep.id}/v1/chat/completions`;
const directUrls = servers.map((s) => `http://${s.host}:${s.port}/v1/chat/completions`);

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 512 });
const body = Buffer.from(JSON.stringify({ model: "bench/chat", messages: [{ role: "user", content: "hello" }] }));

function call(url: string, key?: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: "POST",
      agent: keepAlive,
      headers: {
        "content-type": "application/json",
        "content-length": String(body.length),
        ...(key ? { authorization: `Bearer ${key}` } : {}),
      },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Calls at a fixed rate for SECONDS, alternating the two targets call by call; latencies per target. */
async function openLoop(targets: Array<() => Promise<number>>) {
  const out = targets.map(() => [] as number[]);
  const total = RATE * SECONDS;
  const pending: Array<Promise<void>> = [];
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const k = i % targets.length;
    pending.push(targets[k]!().then((ms) => void out[k]!.push(ms)));
  }
  await Promise.all(pending);
  return out.map((l) => l.sort((a, b) => a - b));
}

async function closedLoop(target: () => Promise<number>, seconds: number) {
  let done = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        await target();
        done++;
      }
    }),
  );
  return done / seconds;
}

try {
  // warm up connections, JIT and the key cache
  for (let i = 0; i < WARM_UP_PAIRS; i++) await Promise.all([call(gatewayUrl, tenantKey), call(directUrls[i % 2]!)]);
  const max = await closedLoop(() => call(gatewayUrl, tenantKey), CLOSED_LOOP_S);
  let turn = 0;
  const [direct, through] = await openLoop([() => call(directUrls[turn++ % 2]!), () => call(gatewayUrl, tenantKey)]);
  const p = (l: number[], q: number) => round(percentile(l, q), 2);
  printFigures({
    max_requests_per_s: Math.round(max),
    rate: RATE,
    seconds: SECONDS,
    direct_p50_ms: p(direct!, 50),
    direct_p99_ms: p(direct!, 99),
    gateway_p50_ms: p(through!, 50),
    gateway_p99_ms: p(through!, 99),
    added_p50_ms: round(percentile(through!, 50) - percentile(direct!, 50), 2),
    added_p99_ms: round(percentile(through!, 99) - percentile(direct!, 99), 2),
    cpus: os.cpus().length,
  });
} finally {
  server.closeAllConnections();
  server.close();
  keepAlive.destroy();
  await g.close();
  for (const s of servers) await s.close();
  await disconnectDb();
  await pg.discard();
  rmSync(tempDir, { recursive: true, force: true });
}
