// `npm run bench:ingest`: metrics ingestion at fleet scale. Prints one JSON object:
//   samples_per_s             HTTP, 1,000-sample batches, concurrent clients, production build
//   raw_insert_samples_per_s  the same kind of rows INSERTed straight into gpu_metrics, same database, same run
//   ratio                     samples_per_s / raw_insert_samples_per_s
//   reports_per_s, p50_ms, p99_ms   8-sample agent reports (one node's GPUs), concurrent agents
//   ingest_server_*           the same batch and report loads against `npm run ingest` (the same
//                             handlers on plain node:http, in its own process), same database, same run
// The HTTP path also validates every sample, resolves GPUs by uuid within the agent's cluster,
// keeps per-minute rollups and counts node heartbeats; the raw baseline does none of that.
import pg from "pg";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { systemActor } from "@/lib/auth/principal";
import { disconnectDb } from "@/lib/db/client";
import { createCluster } from "@/lib/fleet/create-cluster";
import { fleetFloor } from "@/lib/fleet/queries";
import { spawnSync } from "node:child_process";
import { freePort } from "../scripts/lib/embedded-db";
import { startIngestServer, waitForHealthy } from "../scripts/lib/next-server";
import { cpuMark, type Role } from "./lib/cpu";
import { postJson } from "./lib/post-json";
import { percentile, round, withBenchStack } from "./lib/harness";

const NODES = Number(process.env.BENCH_NODES ?? 1250);
const BATCH = 1000;
const HTTP_CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const HTTP_SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const REPORT_CLIENTS = Number(process.env.BENCH_REPORT_CLIENTS ?? 32);

interface Gpu {
  id: string;
  uuid: string;
}

async function registerFleet(databaseUrl: string, clusterId: string): Promise<Gpu[][]> {
  // Set-based setup (the benchmark measures ingestion, not registration).
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  await c.query(
    `INSERT INTO nodes (cluster_id, hostname, pod, rack, status, last_heartbeat_at)
     SELECT $1, 'bench-' || i, 'pod-' || (i % 10), 'rack-' || (i % 100), 'available', now() FROM generate_series(1, $2) i`,
    [clusterId, NODES],
  );
  await c.query(
    `INSERT INTO gpus (node_id, uuid, index, gpu_type, memory_total_mb)
     SELECT n.id, 'GPU-bench-' || n.hostname || '-' || g, g, 'H100', 81559 FROM nodes n, generate_series(0, 7) g WHERE n.cluster_id = $1`,
    [clusterId],
  );
  const { rows } = await c.query<{ node_id: string; id: string; uuid: string }>(
    `SELECT g.node_id, g.id, g.uuid FROM gpus g JOIN nodes n ON n.id = g.node_id WHERE n.cluster_id = $1 ORDER BY n.hostname, g.index`,
    [clusterId],
  );
  await c.end();
  const byNode = new Map<string, Gpu[]>();
  for (const r of rows) byNode.set(r.node_id, [...(byNode.get(r.node_id) ?? []), { id: r.id, uuid: r.uuid }]);
  return [...byNode.values()];
}

function samples(gpus: Gpu[], at: Date) {
  const iso = at.toISOString();
  return gpus.map((g, i) => ({
    gpu_uuid: g.uuid,
    recorded_at: iso,
    utilization_pct: (i * 7) % 100,
    memory_used_mb: 40_000 + i,
    temperature_c: 40 + (i % 40),
    power_draw_w: 300 + (i % 300),
  }));
}

/**
 * HTTP_CLIENTS workers, each with its own slice of the GPUs (no two write the same rows), sending
 * 1,000-sample batches with fresh timestamps until time is up; returns samples stored per second.
 */
async function batchesPerWorker(epochYear: number, nodes: Gpu[][], send: (batch: Gpu[], at: Date) => Promise<number>) {
  const all = nodes.flat();
  const slice = Math.floor(all.length / HTTP_CLIENTS);
  let stored = 0;
  const cpu = cpuMark();
  const started = Date.now();
  const deadline = started + HTTP_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: HTTP_CLIENTS }, async (_, w) => {
      const mine = all.slice(w * slice, (w + 1) * slice);
      for (let tick = 0; Date.now() < deadline; tick++) {
        const offset = (tick * BATCH) % Math.max(1, mine.length - BATCH);
        // every batch gets its own timestamp: nothing is deduplicated away
        const n = await send(mine.slice(offset, offset + BATCH), new Date(Date.UTC(epochYear, 0, 1) + w * 1e9 + tick * 1000));
        stored += n; // added after the await: `stored += await …` would read a stale total across workers

      }
    }),
  );
  return { rate: stored / ((Date.now() - started) / 1000), cpu_us_per_sample: perUnit(cpu.since(), stored) };
}

/** CPU microseconds per unit of work, by role (null where /proc cannot be read). */
function perUnit(cpu: Record<Role, number> | null, units: number) {
  if (!cpu || units === 0) return null;
  return Object.fromEntries(Object.entries(cpu).filter(([, s]) => s > 0).map(([role, s]) => [role, round((s * 1e6) / units)]));
}

// Each phase writes samples dated in its own past year: nothing collides, nothing is "in the future"
// (the API rejects samples more than 5 minutes ahead, which would measure validation only).
async function httpThroughput(baseUrl: string, key: string, nodes: Gpu[][], epochYear = 2021) {
  return batchesPerWorker(epochYear, nodes, async (batch, at) => {
    const res = await postJson(`${baseUrl}/api/clusters/metrics`, key, JSON.stringify({ metrics: samples(batch, at) }));
    const body = res.body as { accepted: number };
    if (res.status !== 202 || body.accepted !== batch.length) throw new Error(`metrics: HTTP ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    return body.accepted;
  });
}

async function rawInsertRate(databaseUrl: string, nodes: Gpu[][]) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: HTTP_CLIENTS });
  const measured = await batchesPerWorker(2020, nodes, async (batch, at) => {
    const rows = samples(batch, at);
    const r = await pool.query(
      `INSERT INTO gpu_metrics (gpu_id, recorded_at, utilization_pct, memory_used_mb, temperature_c, power_draw_w)
       SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::real[], $4::int[], $5::real[], $6::real[])`,
      [batch.map((g) => g.id), rows.map(() => at.toISOString()), rows.map((s) => s.utilization_pct), rows.map((s) => s.memory_used_mb), rows.map((s) => s.temperature_c), rows.map((s) => s.power_draw_w)],
    );
    return r.rowCount ?? 0;
  });
  await pool.end();
  return measured;
}

async function agentReports(baseUrl: string, key: string, nodes: Gpu[][], epochYear = 2022) {
  const latencies: number[] = [];
  const cpu = cpuMark();
  const started = Date.now();
  const deadline = started + HTTP_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: REPORT_CLIENTS }, async (_, w) => {
      let tick = 0;
      while (Date.now() < deadline) {
        const node = nodes[(w + tick * REPORT_CLIENTS) % nodes.length]!;
        const body = JSON.stringify({ metrics: samples(node, new Date(Date.UTC(epochYear, 0, 1) + w * 1e9 + tick * 1000)) });
        const t0 = performance.now();
        const res = await postJson(`${baseUrl}/api/clusters/metrics`, key, body);
        const reply = res.body as { accepted?: number };
        if (res.status !== 202 || reply.accepted !== node.length) throw new Error(`report: HTTP ${res.status}, ${JSON.stringify(reply).slice(0, 200)}`);
        latencies.push(performance.now() - t0);
        tick++;
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  const cpu_us_per_report = perUnit(cpu.since(), latencies.length);
  latencies.sort((a, b) => a - b);
  return { reports_per_s: latencies.length / seconds, p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99), cpu_us_per_report };
}

async function startIngest(databaseUrl: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const server = startIngestServer({
    port,
    env: { ...process.env, DATABASE_URL: databaseUrl, NODE_ENV: "production", LOG_LEVEL: "warn", DATABASE_POOL_SIZE: "20", NEXTAUTH_SECRET: "bench-secret-0123456789abcdef0123456789" },
    quiet: true,
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealthy(url, 20_000);
  } catch (e) {
    await server.kill();
    throw e;
  }
  return { url, stop: () => server.stop() };
}

/** The fleet floor at 10,000 GPUs: one query, against the naive per-node lookup, plus its HTML size. */
async function floorFigures(databaseUrl: string) {
  const times: number[] = [];
  let racks: Awaited<ReturnType<typeof fleetFloor>> = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    racks = await fleetFloor();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  const t0 = performance.now();
  const nodes = await c.query<{ id: string }>("SELECT id FROM nodes ORDER BY pod, rack, hostname");
  for (const n of nodes.rows) await c.query("SELECT id, index, status FROM gpus WHERE node_id = $1 ORDER BY index", [n.id]);
  const naive = performance.now() - t0;
  await c.end();
  const rendered = spawnSync(process.execPath, ["--import", "tsx", "bench/lib/render-floor.ts"], { input: JSON.stringify(racks), encoding: "utf8", maxBuffer: 64 << 20 });
  const { render_ms, bytes } = JSON.parse(rendered.stdout) as { render_ms: number; bytes: number };
  return {
    floor_gpus: racks.reduce((n, r) => n + r.nodes.reduce((m, x) => m + x.gpus.length, 0), 0),
    floor_query_ms: round(percentile(times, 50)),
    floor_naive_per_node_ms: round(naive),
    floor_render_ms: round(render_ms),
    floor_html_kb: Math.round(bytes / 1024),
  };
}

const result = await withBenchStack(async ({ baseUrl, databaseUrl }) => {
  const cluster = await createCluster(systemActor, { name: "bench", region: null, provider: null });
  const { key } = await createApiKey(systemActor, { name: "bench agent", scope: "agent", cluster_id: cluster.id });
  const nodes = await registerFleet(databaseUrl, cluster.id);
  const floor = await floorFigures(databaseUrl);
  await disconnectDb();
  // warm-up: JIT, connection pools, plan caches
  await fetch(`${baseUrl}/api/health`);
  const http = await httpThroughput(baseUrl, key, nodes);
  const raw = await rawInsertRate(databaseUrl, nodes);
  const reports = await agentReports(baseUrl, key, nodes);
  // the same two loads against the ingest server (scripts/ingest-server.ts), in its own process
  const ingest = await startIngest(databaseUrl);
  let viaIngest: { batches: Awaited<ReturnType<typeof httpThroughput>>; reports: Awaited<ReturnType<typeof agentReports>> };
  try {
    viaIngest = { batches: await httpThroughput(ingest.url, key, nodes, 2023), reports: await agentReports(ingest.url, key, nodes, 2024) };
  } finally {
    await ingest.stop();
  }
  return {
    gpus: nodes.length * 8,
    batch_size: BATCH,
    http_clients: HTTP_CLIENTS,
    seconds_per_phase: HTTP_SECONDS,
    samples_per_s: Math.round(http.rate),
    raw_insert_samples_per_s: Math.round(raw.rate),
    ratio: round(http.rate / raw.rate, 2),
    report_clients: REPORT_CLIENTS,
    reports_per_s: Math.round(reports.reports_per_s),
    p50_ms: round(reports.p50_ms),
    p99_ms: round(reports.p99_ms),
    ingest_server_samples_per_s: Math.round(viaIngest.batches.rate),
    ingest_server_ratio: round(viaIngest.batches.rate / raw.rate, 2),
    ingest_server_reports_per_s: Math.round(viaIngest.reports.reports_per_s),
    ingest_server_p50_ms: round(viaIngest.reports.p50_ms),
    ingest_server_p99_ms: round(viaIngest.reports.p99_ms),
    ...floor,
    // where each phase's CPU went (database, server under test, load generator): on two shared
    // cores these add up to the wall clock, so they say which side to make cheaper
    cpu_us_per_sample: { batches: http.cpu_us_per_sample, raw_insert: raw.cpu_us_per_sample, ingest_server_batches: viaIngest.batches.cpu_us_per_sample },
    cpu_us_per_report: { reports: reports.cpu_us_per_report, ingest_server_reports: viaIngest.reports.cpu_us_per_report },
    cores: (await import("node:os")).cpus().length,
  };
});
console.log(JSON.stringify(result, null, 2));
process.exit(0);
