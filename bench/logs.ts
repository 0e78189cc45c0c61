// `npm run bench:logs`: workload log ingestion. Prints one JSON object:
//   ingest_server_chunks_per_s, _p50_ms, _p99_ms   HTTP to `npm run ingest`, where agents send their
//                                  log chunks (GPUFORGE_INGEST_URL): JOBS agents shipping 200-chunk
//                                  batches (200 B lines; what the agent's log spool sends at most) of their own jobs' output concurrently; key
//                                  auth, validation, the fence check under the placement's row lock,
//                                  dedupe, the per-run cap, group commit (lib/workload-logs/ingest-job-logs.ts)
//   raw_insert_chunks_per_s        the same rows INSERTed straight into workload_logs in batches of
//                                  the same size, same database, same run, same concurrency
//   ingest_server_ratio            ingest_server_chunks_per_s / raw_insert_chunks_per_s
//   app_chunks_per_s, app_ratio    the same load through the app (production build), which runs the
//                                  same handler behind Next.js
//   resend_chunks_per_s            the ingest server's batches sent again (an agent that lost the
//                                  answers): acknowledged without storing anything twice
//   *_chunks_stored / chunks_expected   every chunk once, however often it was sent
//   cpu_us_per_chunk               where each path's CPU went: database, server, load generator
// BENCH_ROUNDS=n measures the three paths n times, in turn (fresh placements each round), and
// reports each over all its rounds, so the ratio's two sides see the same machine. BENCH_SMOKE=1:
// 4 jobs × 3 batches.
import type pg from "pg";
import { randomUUID } from "node:crypto";
import os from "node:os";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { systemActor } from "@/lib/auth/principal";
import { disconnectDb } from "@/lib/db/client";
import { createCluster } from "@/lib/fleet/create-cluster";
import { postJson } from "./lib/post-json";
import { harnessClient, harnessPool } from "../scripts/lib/harness-clients";
import { cpuMark, type Role } from "./lib/cpu";
import { startBenchIngest } from "./lib/ingest-server";
import { percentile, round, withBenchStack } from "./lib/harness";
import { benchSize, printFigures } from "./lib/report";

const JOBS = benchSize("BENCH_LOG_JOBS", 32, 4);
const BATCHES = benchSize("BENCH_LOG_BATCHES", 20, 3);
const CHUNKS = 200;
const ROUNDS = benchSize("BENCH_ROUNDS", 1, 1);
const LINE = `step 1234/5000  loss=1.2345  lr=2.50e-4  tokens/s=74656 ${"x".repeat(143)}\n`; // 200 bytes

interface Placement {
  jobId: string;
  attempt: number;
  fence: string;
}

/** Running jobs with open placements on one container node, written set-based (the bench measures logs, not scheduling). */
async function seedPlacements(c: pg.Client, clusterId: string, tag: string): Promise<Placement[]> {
  const tenant = (await c.query(`INSERT INTO tenants (name, gpu_quota) VALUES ($1, $2) RETURNING id`, [`bench-logs-${tag}`, JOBS])).rows[0]
    .id as string;
  const node = (
    await c.query(
      `INSERT INTO nodes (cluster_id, hostname, status, containers, last_heartbeat_at) VALUES ($1, $2, 'available', true, now()) RETURNING id`,
      [clusterId, `bench-logs-${tag}`],
    )
  ).rows[0].id as string;
  await c.query(
    `INSERT INTO gpus (node_id, uuid, index, gpu_type, memory_total_mb) SELECT $1, 'GPU-bench-logs-' || $3 || '-' || g, g, 'H100', 81559 FROM generate_series(0, $2 - 1) g`,
    [node, JOBS, tag],
  );
  const out: Placement[] = [];
  await c.query("BEGIN");
  for (let i = 0; i < JOBS; i++) {
    const fence = randomUUID();
    const job = (
      await c.query(
        `INSERT INTO jobs (tenant_id, name, gpu_count, gpu_type, image, command, status, started_at, attempts, fence) VALUES ($1, $2, 1, 'H100', 'alpine:3.20', 'train', 'running', now(), 1, $3) RETURNING id`,
        [tenant, `bench-log-${i}`, fence],
      )
    ).rows[0].id as string;
    const gpu = (
      await c.query(
        `UPDATE gpus SET allocated_job_id = $1 WHERE id = (SELECT id FROM gpus WHERE node_id = $2 AND allocated_job_id IS NULL ORDER BY index LIMIT 1) RETURNING id`,
        [job, node],
      )
    ).rows[0].id as string;
    await c.query(
      `INSERT INTO job_placements (job_id, attempt, fence, gpu_ids, node_ids, started_at) VALUES ($1, 1, $2, ARRAY[$3::uuid], ARRAY[$4::uuid], now())`,
      [job, fence, gpu, node],
    );
    out.push({ jobId: job, attempt: 1, fence });
  }
  await c.query("COMMIT");
  return out;
}

const batch = (from: number) =>
  Array.from({ length: CHUNKS }, (_, i) => ({ seq: from + i, stream: i % 10 === 9 ? "stderr" : "stdout", text: LINE }));

/** Every placement's BATCHES batches, its agents all at once. */
async function measured(fn: (p: Placement, b: number) => Promise<void>, placements: Placement[]): Promise<Round> {
  const latencies: number[] = [];
  const cpu = cpuMark();
  const started = performance.now();
  await Promise.all(
    placements.map(async (p) => {
      for (let b = 0; b < BATCHES; b++) {
        const t0 = performance.now();
        await fn(p, b);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { chunks: placements.length * BATCHES * CHUNKS, seconds: (performance.now() - started) / 1000, latencies, cpu: cpu.since() };
}

interface Round {
  chunks: number;
  seconds: number;
  latencies: number[];
  cpu: Record<Role, number> | null;
}

/** A path's rounds together: chunks/s over all of them, latency, and CPU per chunk by process. */
function combine(rounds: Round[]) {
  const chunks = rounds.reduce((n, r) => n + r.chunks, 0);
  const seconds = rounds.reduce((n, r) => n + r.seconds, 0);
  const latencies = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const cpu: Record<Role, number> = { database: 0, app: 0, ingest_server: 0, load_generator: 0 };
  for (const r of rounds) for (const role of Object.keys(cpu) as Role[]) cpu[role] += r.cpu?.[role] ?? 0;
  return {
    chunksPerS: Math.round(chunks / seconds),
    p50: round(percentile(latencies, 50)),
    p99: round(percentile(latencies, 99)),
    cpuUsPerChunk: Object.fromEntries(Object.entries(cpu).map(([role, sec]) => [role, round((sec * 1e6) / chunks)])),
  };
}

const result = await withBenchStack(async ({ baseUrl, databaseUrl }) => {
  const c = harnessClient(databaseUrl, "bench:logs");
  await c.connect();
  const cluster = await createCluster(systemActor, { name: "bench-logs", region: "bench", provider: "bench" });
  const { key } = await createApiKey(systemActor, { name: "bench-logs-agent", scope: "agent", cluster_id: cluster.id });
  await disconnectDb();
  const ingest = await startBenchIngest(databaseUrl);
  const raw = harnessPool({ connectionString: databaseUrl, max: 20 }, "bench:logs raw insert");
  try {
    const insertRaw = async (p: Placement, b: number) => {
      const rows = batch(b * CHUNKS);
      await raw.query(
        `INSERT INTO workload_logs (job_id, attempt, seq, stream, text) SELECT $1, $2, x.seq, x.stream, x.text FROM unnest($3::int[], $4::text[], $5::text[]) AS x(seq, stream, text)`,
        [p.jobId, p.attempt, rows.map((r) => r.seq), rows.map((r) => r.stream), rows.map((r) => r.text)],
      );
    };
    const send = (server: string) => (p: Placement, b: number) =>
      postJson(
        `${server}/api/jobs/${p.jobId}/logs`,
        key,
        JSON.stringify({ attempt: p.attempt, fence: p.fence, chunks: batch(b * CHUNKS) }),
      ).then((r) => {
        if (r.status !== 202) throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 200)}`);
      });
    const rounds = { raw: [] as Round[], ingest: [] as Round[], app: [] as Round[] };
    const sentIngest: Placement[] = [];
    const sentApp: Placement[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // each path writes its own placements' logs, fresh each round
      const [rawTarget, viaIngest, viaApp] = [
        await seedPlacements(c, cluster.id, `raw-${r}`),
        await seedPlacements(c, cluster.id, `ingest-${r}`),
        await seedPlacements(c, cluster.id, `app-${r}`),
      ];
      // warm each route up before measuring (a batch each, counted as stored)
      if (r === 0) {
        await send(ingest.url)(viaIngest[0]!, BATCHES + 1);
        await send(baseUrl)(viaApp[0]!, BATCHES + 1);
      }
      rounds.raw.push(await measured(insertRaw, rawTarget));
      rounds.ingest.push(await measured(send(ingest.url), viaIngest));
      rounds.app.push(await measured(send(baseUrl), viaApp));
      sentIngest.push(...viaIngest);
      sentApp.push(...viaApp);
    }
    // an agent that lost the answers sends the same batches again
    const resend = combine([await measured(send(ingest.url), sentIngest.slice(-JOBS))]);
    const stored = async (ps: Placement[]) =>
      (await c.query(`SELECT count(*)::int AS n FROM workload_logs WHERE job_id = ANY($1::uuid[])`, [ps.map((p) => p.jobId)])).rows[0]
        .n as number;
    return {
      baseline: combine(rounds.raw),
      throughIngest: combine(rounds.ingest),
      throughApp: combine(rounds.app),
      resend,
      storedIngest: await stored(sentIngest),
      storedApp: await stored(sentApp),
    };
  } finally {
    await raw.end();
    await ingest.stop();
    await c.end();
  }
});

printFigures({
  jobs: JOBS,
  batches_per_job: BATCHES,
  chunks_per_batch: CHUNKS,
  rounds: ROUNDS,
  chunk_bytes: LINE.length,
  raw_insert_chunks_per_s: result.baseline.chunksPerS,
  raw_insert_p99_ms: result.baseline.p99,
  ingest_server_chunks_per_s: result.throughIngest.chunksPerS,
  ingest_server_p50_ms: result.throughIngest.p50,
  ingest_server_p99_ms: result.throughIngest.p99,
  ingest_server_ratio: round(result.throughIngest.chunksPerS / result.baseline.chunksPerS, 2),
  app_chunks_per_s: result.throughApp.chunksPerS,
  app_p50_ms: result.throughApp.p50,
  app_p99_ms: result.throughApp.p99,
  app_ratio: round(result.throughApp.chunksPerS / result.baseline.chunksPerS, 2),
  resend_chunks_per_s: result.resend.chunksPerS,
  resend_p99_ms: result.resend.p99,
  // every chunk once: the measured batches plus the warm-up batch, however often they were sent
  ingest_server_chunks_stored: result.storedIngest,
  app_chunks_stored: result.storedApp,
  chunks_expected: ROUNDS * JOBS * BATCHES * CHUNKS + CHUNKS,
  cpu_us_per_chunk: {
    raw_insert: result.baseline.cpuUsPerChunk,
    ingest_server: result.throughIngest.cpuUsPerChunk,
    app: result.throughApp.cpuUsPerChunk,
  },
  cores: os.cpus().length,
});
process.exit(0);
