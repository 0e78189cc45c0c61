// `npm run bench:ingest`: metrics ingestion at fleet scale. Prints one JSON object:
//   samples_per_s             HTTP, 1,000-sample batches, concurrent clients, production build
//   raw_insert_samples_per_s  the same kind of rows INSERTed straight into gpu_metrics, same database, same run
//   ratio                     samples_per_s / raw_insert_samples_per_s
//   reports_per_s, p50_ms, p99_ms   8-sample agent reports (one node's GPUs), concurrent agents
//   ingest_server_*           the same batch and report loads against `npm run ingest` (the same
//                             handlers on plain node:http, in its own process), same database, same run
// BENCH_PHASES limits the run to some phases (floor, batches, raw, reports, ingest_batches,
// ingest_reports); phases not run print null. BENCH_ROUNDS=n runs the load phases n times, in
// turn (n × BENCH_SECONDS each), and reports each phase over all its rounds.
// cpu_us_per_sample / cpu_us_per_report say where each unit's CPU went (database, server, load
// generator); cpu_cores says how many cores each of them, other work on the machine and idle
// averaged over each phase, so a run shows whether a phase was bound by CPU or by its own waiting.
// The HTTP path also validates every sample, resolves GPUs by uuid within the agent's cluster,
// keeps per-minute rollups (each phase ends when they hold all its samples) and counts node
// heartbeats; the raw baseline does none of that.
//   floor_html_kb, floor_render_ms   the operator overview (/admin) at this fleet size, as a signed-in
//                             operator receives it: the whole document, and the time to its last byte
//   growth                    at 1×, 4× and 10× the fleet (10,000 → 100,000 GPUs; BENCH_GROWTH), each
//                             fleet alone in the database: agent reports through the ingest server
//                             (reports/s, p50/p99, CPU per report), the fleet floor query and the
//                             operator overview (its size and time to the last byte), so how each
//                             cost grows with the fleet is visible
// BENCH_SMOKE=1: 25 nodes, every phase for 1 s with a few clients.
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { systemActor } from "@/lib/auth/principal";
import { disconnectDb } from "@/lib/db/client";
import { createCluster } from "@/lib/fleet/create-cluster";
import { fleetFloor } from "@/lib/fleet/queries";
import { foldGpuRollups } from "@/lib/metrics/fold-rollups";
import { coresUsed, cpuMark, type Role } from "./lib/cpu";
import { startBenchIngest } from "./lib/ingest-server";
import { postJson } from "./lib/post-json";
import { harnessClient, harnessPool } from "../scripts/lib/harness-clients";
import { percentile, round, withBenchStack } from "./lib/harness";
import { applyFloorMix, measureOverview, operatorCookie } from "./lib/overview-page";
import { benchSize, printFigures, SMOKE } from "./lib/report";

const NODES = benchSize("BENCH_NODES", 1250, 25);
const BATCH = 1000;
const HTTP_CLIENTS = benchSize("BENCH_CLIENTS", 8, 2);
const HTTP_SECONDS = benchSize("BENCH_SECONDS", 15, 1);
const REPORT_CLIENTS = benchSize("BENCH_REPORT_CLIENTS", 32, 4);
// BENCH_PHASES=raw,ingest_reports (say) runs only those phases, in their usual order; a ratio
// needs its raw baseline in the same run
const ALL_PHASES = ["floor", "batches", "raw", "reports", "ingest_batches", "ingest_reports", "growth"];
const GROWTH = (process.env.BENCH_GROWTH ?? (SMOKE ? "1,2" : "1,4,10")).split(",").map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || ROUNDS > 50) throw new Error("BENCH_ROUNDS: a whole number from 1 to 50");
const PHASES = new Set(process.env.BENCH_PHASES ? process.env.BENCH_PHASES.split(",").map((p) => p.trim()) : ALL_PHASES);
for (const p of PHASES) if (!ALL_PHASES.includes(p)) throw new Error(`BENCH_PHASES: unknown phase ${p} (known: ${ALL_PHASES.join(", ")})`);

interface Gpu {
  id: string;
  uuid: string;
}

async function registerFleet(databaseUrl: string, clusterId: string, count = NODES, prefix = "bench"): Promise<Gpu[][]> {
  // Set-based setup (the benchmark measures ingestion, not registration).
  const c = harnessClient(databaseUrl, "bench:ingest setup");
  await c.connect();
  await c.query(
    `INSERT INTO nodes (cluster_id, hostname, pod, rack, status, last_heartbeat_at)
     SELECT $1, $3 || '-' || i, 'pod-' || (i % 10), 'rack-' || (i % 100), 'available', now() FROM generate_series(1, $2) i`,
    [clusterId, count, prefix],
  );
  await c.query(
    `INSERT INTO gpus (node_id, uuid, index, gpu_type, memory_total_mb)
     SELECT n.id, 'GPU-' || n.hostname || '-' || g, g, 'H100', 81559 FROM nodes n, generate_series(0, 7) g WHERE n.cluster_id = $1`,
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

/** What one phase did in one round; rounds of the same phase add up (combine). */
interface Measured {
  units: number;
  seconds: number;
  cpu: Record<Role, number> | null;
  /** the whole machine's busy and idle CPU seconds over the phase, ours and everyone else's */
  machine: { busy: number; idle: number } | null;
  latencies: number[];
}

/**
 * HTTP_CLIENTS workers, each with its own slice of the GPUs (no two write the same rows), sending
 * 1,000-sample batches with fresh timestamps from `epochMs` on until time is up.
 */
async function batchesPerWorker(
  epochMs: number,
  nodes: Gpu[][],
  send: (batch: Gpu[], at: Date) => Promise<number>,
  settle = async () => {},
): Promise<Measured> {
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
        const n = await send(mine.slice(offset, offset + BATCH), new Date(epochMs + w * 1e9 + tick * 1000));
        stored += n; // added after the await: `stored += await …` would read a stale total across workers
      }
    }),
  );
  await settle();
  return { units: stored, seconds: (Date.now() - started) / 1000, cpu: cpu.since(), machine: cpu.machine(), latencies: [] };
}

/** A phase's rounds together: units per second over all of them, CPU per unit, latencies. */
function combine(rounds: Measured[]) {
  if (rounds.length === 0) return null;
  const units = rounds.reduce((n, r) => n + r.units, 0);
  const seconds = rounds.reduce((n, r) => n + r.seconds, 0);
  const cpu = rounds.some((r) => !r.cpu)
    ? null
    : rounds.reduce(
        (sum, r) =>
          Object.fromEntries(Object.entries(r.cpu!).map(([role, v]) => [role, (sum[role as Role] ?? 0) + v])) as Record<Role, number>,
        {} as Record<Role, number>,
      );
  const latencies = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  return {
    rate: units / seconds,
    cpuPerUnit: perUnit(cpu, units),
    cores: phaseCores(rounds, cpu, seconds),
    p50_ms: round(percentile(latencies, 50)),
    p99_ms: round(percentile(latencies, 99)),
  };
}

/** Cores in use on average over a phase's rounds (lib/cpu.ts). */
function phaseCores(rounds: Measured[], cpu: Record<Role, number> | null, seconds: number) {
  if (rounds.some((r) => !r.machine)) return null;
  const sum = (k: "busy" | "idle") => rounds.reduce((n, r) => n + r.machine![k], 0);
  return coresUsed(cpu, { busy: sum("busy"), idle: sum("idle") }, seconds);
}

/**
 * The HTTP path leaves the per-minute rollups to a fold that the app's background driver runs every
 * few seconds (lib/metrics/fold-rollups.ts). A phase is not over until its samples are in the
 * rollups: whatever is still queued when the load stops is folded here, and that time and CPU
 * count towards the phase (the folds during the phase count anyway: the app and the database
 * do them).
 */
async function settleRollups() {
  await foldGpuRollups();
}

/** CPU microseconds per unit of work, by role (null where /proc cannot be read). */
function perUnit(cpu: Record<Role, number> | null, units: number) {
  if (!cpu || units === 0) return null;
  return Object.fromEntries(
    Object.entries(cpu)
      .filter(([, s]) => s > 0)
      .map(([role, s]) => [role, round((s * 1e6) / units)]),
  );
}

// Each phase writes samples dated in its own past year, each round 10,000 s further on (a worker
// sends a sample a second of its clock, far fewer than 10,000 a round; workers are 1e9 ms apart):
// nothing collides, nothing is "in the future" (the API rejects samples more than 5 minutes
// ahead, which would measure validation only).
const epoch = (year: number, round: number) => Date.UTC(year, 0, 1) + round * 1e7;

async function httpThroughput(baseUrl: string, key: string, nodes: Gpu[][], epochMs: number) {
  return batchesPerWorker(
    epochMs,
    nodes,
    async (batch, at) => {
      const res = await postJson(`${baseUrl}/api/clusters/metrics`, key, JSON.stringify({ metrics: samples(batch, at) }));
      const body = res.body as { accepted: number };
      if (res.status !== 202 || body.accepted !== batch.length)
        throw new Error(`metrics: HTTP ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      return body.accepted;
    },
    settleRollups,
  );
}

async function rawInsertRate(databaseUrl: string, nodes: Gpu[][], epochMs: number) {
  const pool = harnessPool({ connectionString: databaseUrl, max: HTTP_CLIENTS }, "bench:ingest raw insert");
  const measured = await batchesPerWorker(epochMs, nodes, async (batch, at) => {
    const rows = samples(batch, at);
    const r = await pool.query(
      `INSERT INTO gpu_metrics (gpu_id, recorded_at, utilization_pct, memory_used_mb, temperature_c, power_draw_w)
       SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::real[], $4::int[], $5::real[], $6::real[])`,
      [
        batch.map((g) => g.id),
        rows.map(() => at.toISOString()),
        rows.map((s) => s.utilization_pct),
        rows.map((s) => s.memory_used_mb),
        rows.map((s) => s.temperature_c),
        rows.map((s) => s.power_draw_w),
      ],
    );
    return r.rowCount ?? 0;
  });
  await pool.end();
  return measured;
}

async function agentReports(baseUrl: string, key: string, nodes: Gpu[][], epochMs: number): Promise<Measured> {
  const latencies: number[] = [];
  const cpu = cpuMark();
  const started = Date.now();
  const deadline = started + HTTP_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: REPORT_CLIENTS }, async (_, w) => {
      let tick = 0;
      while (Date.now() < deadline) {
        const node = nodes[(w + tick * REPORT_CLIENTS) % nodes.length]!;
        const body = JSON.stringify({ metrics: samples(node, new Date(epochMs + w * 1e9 + tick * 1000)) });
        const t0 = performance.now();
        const res = await postJson(`${baseUrl}/api/clusters/metrics`, key, body);
        const reply = res.body as { accepted?: number };
        if (res.status !== 202 || reply.accepted !== node.length)
          throw new Error(`report: HTTP ${res.status}, ${JSON.stringify(reply).slice(0, 200)}`);
        latencies.push(performance.now() - t0);
        tick++;
      }
    }),
  );
  await settleRollups();
  return { units: latencies.length, seconds: (Date.now() - started) / 1000, cpu: cpu.since(), machine: cpu.machine(), latencies };
}

/**
 * The fleet floor at 10,000 GPUs: one query, against the naive per-node lookup; then the operator
 * overview (/admin) as a signed-in operator receives it, with the fleet given a normal day's mix of
 * states (put back afterwards, so the ingest phases see the fleet as registered).
 */
async function floorFigures(databaseUrl: string, baseUrl: string, clusterId: string) {
  const times: number[] = [];
  let racks: Awaited<ReturnType<typeof fleetFloor>> = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    racks = await fleetFloor();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const c = harnessClient(databaseUrl, "bench:ingest floor");
  await c.connect();
  const t0 = performance.now();
  const nodes = await c.query<{ id: string }>("SELECT id FROM nodes ORDER BY pod, rack, hostname");
  for (const n of nodes.rows) await c.query("SELECT id, index, status FROM gpus WHERE node_id = $1 ORDER BY index", [n.id]);
  const naive = performance.now() - t0;
  await c.end();
  const restore = await applyFloorMix(databaseUrl, clusterId);
  let page: Awaited<ReturnType<typeof measureOverview>>;
  try {
    page = await measureOverview(baseUrl, await operatorCookie(baseUrl));
  } finally {
    await restore();
  }
  return {
    floor_gpus: racks.reduce((n, r) => n + r.nodes.reduce((m, x) => m + x.gpus.length, 0), 0),
    floor_query_ms: round(percentile(times, 50)),
    floor_naive_per_node_ms: round(naive),
    // the whole /admin document (uncompressed) and the server's time to its first and last byte
    floor_html_kb: Math.round(page.bytes / 1024),
    floor_html_gzip_kb: Math.round(page.gzip_bytes / 1024),
    floor_first_byte_ms: page.first_byte_ms,
    floor_render_ms: page.last_byte_ms,
  };
}

/**
 * The same fleet at each multiple of its size, alone in the database (every cluster of the run
 * before it removed with what hangs off it): agent reports through the ingest server, the floor
 * query and the operator overview with a normal day's mix.
 */
async function growthFigures(databaseUrl: string, baseUrl: string, ingest: Awaited<ReturnType<typeof startBenchIngest>>) {
  const c = harnessClient(databaseUrl, "bench:ingest growth");
  await c.connect();
  const cookie = await operatorCookie(baseUrl);
  const growth = [];
  try {
    for (const m of GROWTH) {
      await c.query("TRUNCATE clusters CASCADE");
      await c.query("VACUUM ANALYZE");
      const cluster = await createCluster(systemActor, { name: `growth-${m}`, region: null, provider: null });
      const { key } = await createApiKey(systemActor, { name: `growth ${m}× agent`, scope: "agent", cluster_id: cluster.id });
      const nodes = await registerFleet(databaseUrl, cluster.id, NODES * m, `g${m}`);
      await c.query("ANALYZE");
      const reports = combine([await agentReports(ingest.url, key, nodes, epoch(2010 + m, 0))])!;
      const floorTimes: number[] = [];
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        await fleetFloor();
        floorTimes.push(performance.now() - t0);
      }
      const restore = await applyFloorMix(databaseUrl, cluster.id);
      let page: Awaited<ReturnType<typeof measureOverview>>;
      try {
        page = await measureOverview(baseUrl, cookie, SMOKE ? 1 : 5);
      } finally {
        await restore();
      }
      const figures = {
        multiple: m,
        gpus: nodes.length * 8,
        ingest_server_reports_per_s: Math.round(reports.rate),
        ingest_server_p50_ms: reports.p50_ms,
        ingest_server_p99_ms: reports.p99_ms,
        cpu_us_per_report: reports.cpuPerUnit,
        floor_query_ms: round(
          percentile(
            floorTimes.sort((a, b) => a - b),
            50,
          ),
        ),
        floor_html_kb: Math.round(page.bytes / 1024),
        floor_html_gzip_kb: Math.round(page.gzip_bytes / 1024),
        floor_render_ms: page.last_byte_ms,
      };
      process.stderr.write(`[bench:ingest] growth ${m}×: ${JSON.stringify(figures)}\n`);
      growth.push(figures);
    }
  } finally {
    await c.end();
  }
  return growth;
}

const result = await withBenchStack(async ({ baseUrl, databaseUrl }) => {
  const cluster = await createCluster(systemActor, { name: "bench", region: null, provider: null });
  const { key } = await createApiKey(systemActor, { name: "bench agent", scope: "agent", cluster_id: cluster.id });
  const nodes = await registerFleet(databaseUrl, cluster.id);
  const floor = PHASES.has("floor") ? await floorFigures(databaseUrl, baseUrl, cluster.id) : {};
  await disconnectDb();
  // warm-up: JIT, connection pools, plan caches
  await fetch(`${baseUrl}/api/health`);
  // the same two loads against the ingest server (scripts/ingest-server.ts), in its own process
  const ingest =
    PHASES.has("ingest_batches") || PHASES.has("ingest_reports") || PHASES.has("growth") ? await startBenchIngest(databaseUrl) : null;
  let growth: Awaited<ReturnType<typeof growthFigures>> | null = null;
  const runs: Record<string, Measured[]> = { batches: [], raw: [], reports: [], ingest_batches: [], ingest_reports: [] };
  try {
    // BENCH_ROUNDS > 1 interleaves the phases (each BENCH_SECONDS long) round after round, so a
    // baseline and the figures compared with it see the same machine even when its load drifts
    for (let r = 0; r < ROUNDS; r++) {
      if (PHASES.has("batches")) runs.batches!.push(await httpThroughput(baseUrl, key, nodes, epoch(2021, r)));
      if (PHASES.has("raw")) runs.raw!.push(await rawInsertRate(databaseUrl, nodes, epoch(2020, r)));
      if (PHASES.has("reports")) runs.reports!.push(await agentReports(baseUrl, key, nodes, epoch(2022, r)));
      if (ingest && PHASES.has("ingest_batches")) runs.ingest_batches!.push(await httpThroughput(ingest.url, key, nodes, epoch(2023, r)));
      if (ingest && PHASES.has("ingest_reports")) runs.ingest_reports!.push(await agentReports(ingest.url, key, nodes, epoch(2024, r)));
    }
    // last: it removes the fleet the phases above measured
    if (ingest && PHASES.has("growth")) growth = await growthFigures(databaseUrl, baseUrl, ingest);
  } finally {
    await ingest?.stop();
  }
  const http = combine(runs.batches!);
  const raw = combine(runs.raw!);
  const reports = combine(runs.reports!);
  const viaIngest = { batches: combine(runs.ingest_batches!), reports: combine(runs.ingest_reports!) };
  // this process's own pools (the rollup folds above): closed before the database stops under them
  await disconnectDb();
  const ratio = (r: number | undefined) => (r !== undefined && raw ? round(r / raw.rate, 2) : undefined);
  return {
    gpus: nodes.length * 8,
    batch_size: BATCH,
    http_clients: HTTP_CLIENTS,
    seconds_per_phase: HTTP_SECONDS,
    rounds: ROUNDS,
    samples_per_s: http && Math.round(http.rate),
    raw_insert_samples_per_s: raw && Math.round(raw.rate),
    ratio: ratio(http?.rate) ?? null,
    report_clients: REPORT_CLIENTS,
    reports_per_s: reports && Math.round(reports.rate),
    p50_ms: reports && reports.p50_ms,
    p99_ms: reports && reports.p99_ms,
    ingest_server_samples_per_s: viaIngest.batches && Math.round(viaIngest.batches.rate),
    ingest_server_ratio: ratio(viaIngest.batches?.rate) ?? null,
    ingest_server_reports_per_s: viaIngest.reports && Math.round(viaIngest.reports.rate),
    ingest_server_p50_ms: viaIngest.reports && viaIngest.reports.p50_ms,
    ingest_server_p99_ms: viaIngest.reports && viaIngest.reports.p99_ms,
    ...floor,
    // where each phase's CPU went (database, server under test, load generator): on two shared
    // cores these add up to the wall clock, so they say which side to make cheaper
    cpu_us_per_sample: {
      batches: http?.cpuPerUnit ?? null,
      raw_insert: raw?.cpuPerUnit ?? null,
      ingest_server_batches: viaIngest.batches?.cpuPerUnit ?? null,
    },
    cpu_us_per_report: { reports: reports?.cpuPerUnit ?? null, ingest_server_reports: viaIngest.reports?.cpuPerUnit ?? null },
    // average cores in use during each phase, by role, plus other work on the machine and idle
    cpu_cores: {
      batches: http?.cores ?? null,
      raw_insert: raw?.cores ?? null,
      reports: reports?.cores ?? null,
      ingest_server_batches: viaIngest.batches?.cores ?? null,
      ingest_server_reports: viaIngest.reports?.cores ?? null,
    },
    growth,
    cores: (await import("node:os")).cpus().length,
  };
});
// a phase left out with BENCH_PHASES prints null; a full or smoke run has every figure
printFigures(result, { nullsAllowed: PHASES.size < ALL_PHASES.length });
process.exit(0);
