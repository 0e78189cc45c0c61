// `npm run bench:scheduler`: one scheduling cycle at fleet scale, against what the database itself
// needs for the same writes. Prints one JSON object:
//   jobs, gpus                 10,000 queued mixed-size jobs from 50 tenants; 10,000 GPUs (1,250 nodes × 8)
//   cycle_ms                   one full cycle, commit (the deferred checks) included: the median of
//                              BENCH_CYCLES cycles, each on the same world
//   limit_ms                   the database's lower bound in the same run: the same placements and
//                              reasons written by one set-based statement with no decisions (allocations,
//                              job status, fences, events), committed, every trigger firing (median)
//   cycle_to_limit             cycle_ms / limit_ms
//   limit_without_triggers_ms  that statement with triggers and deferred checks switched off: what
//                              the invariants cost the database
//   limit_profile              where that statement's own time goes, as EXPLAIN ANALYZE reports it
//                              (deferred checks made immediate, rolled back): each write's ms and WAL
//                              records, and each check's ms, foreign keys included
//   profile                    where the median cycle's time went: lock, reads, the pure placement,
//                              writes, commit, each statement, and the triggers' own time
//   allocation_model           what an allocation costs the database in two data models, on the cycle's
//                              placements: each GPU's row updated (as now: every index of gpus) against
//                              a row inserted in a narrow table keyed by GPU, and the frees of both
//   naive_cycle_ms, speedup    the original design on the same data: one job at a time, a query per
//                              check, a transaction per job (stopped after BENCH_NAIVE_CAP_S, extrapolated)
//   dead_cluster_*             every priority-1 job pinned to a cluster whose nodes are all in
//                              maintenance: such a head reserves nothing, so about as much is placed
//   backlog_100k_*             the same fleet under 100,000 queued jobs: the cycle reads its fair
//                              window (SCHEDULER_TENANT_WINDOW per tenant, at most 50,000), not all of them
//   submit_to_running          BENCH_SUBMIT_RATE submits/s over HTTP for free GPUs of another type,
//                              with the 10,000-job backlog waiting and the app's background jobs
//                              running: p50/p99/max and where the p99 samples' time went (request,
//                              wake-up, cycle, commit), the cores each side used meanwhile and the app's
//                              background runs by job, autovacuum's runs (database_maintenance);
//                              submit_to_running_no_backlog, the same without it
//   event_cycle_*              the cycle one submit wakes, alone: one 1-GPU L4 job, free L4 GPUs, the
//                              H100 fleet full and the backlog waiting for it; the median of
//                              BENCH_EVENT_CYCLES such cycles and the median of each phase and statement
//   fair_window_*              one tenant holds 50,000 quota-blocked jobs at priority 1 while another
//                              submits: the cycle, whether the newcomer was placed, the rows read,
//                              and what the old single window alone cost on the same data
//   growth                     cycle_ms, limit_ms and their ratio at 1×, 4× and 10× the fleet and its
//                              queue (10,000 → 100,000 GPUs; BENCH_GROWTH), each world alone in the database
// BENCH_SMOKE=1 runs every phase at a few hundred jobs (npm test). DATABASE_URL: databases are made
// (and dropped) on that server instead of an embedded one.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type pg from "pg";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { systemActor } from "@/lib/auth/principal";
import { disconnectDb, pool } from "@/lib/db/client";
import { emptyProfile, type CycleProfile } from "@/lib/scheduler/cycle-profile";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { dropDatabase, ensureDatabase, freePort, startEmbeddedDatabase } from "../scripts/lib/embedded-db";
import { harnessClient } from "../scripts/lib/harness-clients";
import { buildIsFresh, nextBuild, startNext, waitForHealthy } from "../scripts/lib/next-server";
import { runMigrations } from "../scripts/lib/run-migrations";
import { backgroundRunsBetween, databaseMaintenanceBetween, readBackgroundRuns, readDatabaseMaintenance } from "./lib/background-runs";
import { coresUsed, cpuMark as processCpuMark } from "./lib/cpu";
import { median, percentile, round } from "./lib/harness";
import { benchSize, flag, printFigures, SMOKE } from "./lib/report";
import {
  allocationModels,
  applyLowerBound,
  cpuMark,
  cpuSince,
  functionTimes,
  naiveCycle,
  profileLowerBound,
  readCycleWrites,
  resetCycle,
  seedFleet,
  seedQueuedJobs,
  seedTenants,
} from "./lib/scheduler-world";
import { endRunningJobs, latencyFigures, submitAtRate } from "./lib/submit-latency";

const NODES = benchSize("BENCH_NODES", 1250, 25);
const JOBS = benchSize("BENCH_JOBS", 10_000, 200);
const TENANTS = benchSize("BENCH_TENANTS", 50, 5);
const CYCLES = benchSize("BENCH_CYCLES", 5, 1);
const NAIVE_CAP_S = benchSize("BENCH_NAIVE_CAP_S", 60, 2);
const BIG_BACKLOG = benchSize("BENCH_BIG_BACKLOG", 100_000, 2_000);
const SUBMIT_RATE = benchSize("BENCH_SUBMIT_RATE", 50, 10);
const SUBMIT_SAMPLES = benchSize("BENCH_SUBMIT_SAMPLES", 1_000, 10);
const EVENT_CYCLES = benchSize("BENCH_EVENT_CYCLES", 200, 5);
const FAIR_BACKLOG = benchSize("BENCH_FAIR_BACKLOG", 50_000, 500);
const GROWTH = (process.env.BENCH_GROWTH ?? (SMOKE ? "1,2" : "1,4,10")).split(",").map(Number);
// BENCH_PHASES=cycle,latency (say) runs only those; the others print null
const ALL_PHASES = ["cycle", "allocation", "naive", "backlog", "dead", "event", "latency", "fair", "growth"];
const PHASES = new Set(process.env.BENCH_PHASES ? process.env.BENCH_PHASES.split(",").map((p) => p.trim()) : ALL_PHASES);
for (const p of PHASES) if (!ALL_PHASES.includes(p)) throw new Error(`BENCH_PHASES: unknown phase ${p} (known: ${ALL_PHASES.join(", ")})`);
const QUOTA = Math.max(16, Math.round((NODES * 8 * 3) / TENANTS)); // 600 at 10,000 GPUs

/** Each phase's figures on stderr as it ends: a long run shows where it is, and what it had if it stops. */
const progress = (phase: string, figures: unknown) => process.stderr.write(`[bench:scheduler] ${phase}: ${JSON.stringify(figures)}\n`);

/** A database of the benchmark's own on its server, migrated, with function timing on (the profile's trigger times). */
async function freshDatabase(serverUrl: string, name: string) {
  const url = await ensureDatabase(serverUrl, name);
  await runMigrations(url);
  const c = harnessClient(url, `bench:scheduler ${name}`);
  await c.connect();
  await c.query(`ALTER DATABASE "${name}" SET track_functions = 'pl'`);
  return { url, c };
}

/** One world's cycles against its lower bound, alternating, on the same facts each time. */
async function cycleAgainstLimit(c: pg.Client, runs: number) {
  const cycles: Array<{
    ms: number;
    cpuMs: number;
    placed: number;
    considered: number;
    profile: CycleProfile;
    triggers: Map<string, number>;
  }> = [];
  const limits: number[] = [];
  const limitCpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    await resetCycle(c);
    const before = await functionTimes(c);
    const profile = emptyProfile();
    const cpu0 = await cpuMark(c);
    const cycle = await runSchedulerCycle("bench", { profile });
    const cpuMs = await cpuSince(c, cpu0);
    // the cycle's own connection reports its function times when it is next used
    await pool().query("SELECT pg_stat_force_next_flush()");
    await new Promise((r) => setTimeout(r, 50));
    await pool().query("SELECT 1");
    const after = await functionTimes(c);
    const triggers = new Map<string, number>();
    for (const [fn, ms] of after) if (ms - (before.get(fn) ?? 0) > 0.05) triggers.set(fn, ms - (before.get(fn) ?? 0));
    cycles.push({ ms: cycle.duration_ms, cpuMs, placed: cycle.placed, considered: cycle.considered, profile, triggers });
    const writes = await readCycleWrites(c);
    await resetCycle(c);
    const lcpu0 = await cpuMark(c);
    limits.push(await applyLowerBound(c, writes));
    limitCpu.push(await cpuSince(c, lcpu0));
  }
  const byTime = [...cycles].sort((a, b) => a.ms - b.ms);
  const mid = byTime[Math.floor(byTime.length / 2)]!;
  return {
    cycle: mid,
    cycleMs: median(cycles.map((x) => x.ms)),
    limitMs: median(limits),
    cycleCpuMs: median(cycles.map((x) => x.cpuMs)),
    limitCpuMs: median(limitCpu),
  };
}

const roundAll = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round(v)]));

function profileFigures(p: CycleProfile, triggers: Map<string, number>) {
  const top = Object.entries(p.statements)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12);
  return {
    lock_ms: round(p.lock_ms),
    read_ms: round(p.read_ms),
    place_ms: round(p.place_ms),
    write_ms: round(p.write_ms),
    commit_ms: round(p.commit_ms),
    triggers_ms: round([...triggers.values()].reduce((n, v) => n + v, 0)),
    by_trigger: roundAll(Object.fromEntries(triggers)),
    by_statement: roundAll(Object.fromEntries(top)),
  };
}

const tempDir = mkdtempSync(path.join(os.tmpdir(), "gpuforge-bench-"));
const external = process.env.DATABASE_URL;
const server = external
  ? { serverUrl: external, discard: async () => {} }
  : await startEmbeddedDatabase({ dataDir: path.join(tempDir, "pg"), port: await freePort(), ephemeral: true, log: () => {} });
const name = `gpuforge_bench_sched_${Date.now().toString(36)}`;
let app: ReturnType<typeof startNext> | undefined;
try {
  const { url: databaseUrl, c } = await freshDatabase(server.serverUrl, name);
  process.env.DATABASE_URL = databaseUrl;
  await seedFleet(c, { cluster: "bench", nodes: NODES, gpuType: "H100" });
  await seedTenants(c, "bench-tenant", TENANTS, QUOTA);
  await seedQueuedJobs(c, { count: JOBS, tenantPrefix: "bench-tenant", tenants: TENANTS, tag: "job" });
  await c.query("ANALYZE");
  // plans, caches and the JIT warm up on one cycle first
  const warm = await runSchedulerCycle("bench warm-up");

  const cycle = PHASES.has("cycle") ? await cyclePhase(c) : null;
  const allocation = PHASES.has("allocation") ? await allocationPhase(c) : null;
  const naive = PHASES.has("naive") ? await naivePhase(c) : null;
  const backlog = PHASES.has("backlog") ? await bigBacklogPhase(c) : null;
  const dead = PHASES.has("dead") ? await deadClusterPhase(c) : null;
  const event = PHASES.has("event") ? await eventCyclePhase(c) : null;
  let latency = null;
  let fair = null;
  if (PHASES.has("latency") || PHASES.has("fair")) {
    const served = await serveApp(c, databaseUrl);
    app = served.app;
    if (PHASES.has("latency")) latency = await latencyPhase(c, served);
    const fairSubmits = PHASES.has("fair") ? await fairWindowSubmits(c, served) : null;
    // the app's own cycles stop before the benchmark runs one of its own
    await app.stop();
    app = undefined;
    if (fairSubmits) fair = { ...(await fairWindowCycle(c)), fair_window_submit_to_running: fairSubmits };
  }
  const growth = PHASES.has("growth") ? await growthPhase(c) : null;
  await c.end();

  printFigures(
    {
      jobs: JOBS,
      gpus: NODES * 8,
      tenants: TENANTS,
      warm_up_cycle_ms: warm.duration_ms,
      ...(cycle ?? { cycle_ms: null }),
      allocation_model: allocation,
      ...(naive ?? { naive_cycle_ms: null }),
      ...(backlog ?? { backlog_100k_cycle_ms: null }),
      ...(dead ?? { dead_cluster_cycle_ms: null }),
      ...(event ?? { event_cycle_ms: null }),
      ...(latency ?? { submit_to_running: null }),
      ...(fair ?? { fair_window_cycle_ms: null }),
      growth,
      cores: os.cpus().length,
    },
    { nullsAllowed: PHASES.size < ALL_PHASES.length },
  );
} finally {
  await app?.stop();
  await disconnectDb();
  if (external) await dropDatabase(external, name).catch(() => {});
  await server.discard();
  rmSync(tempDir, { recursive: true, force: true });
}
process.exit(0);

/** The cycle against its lower bound, and that bound with the triggers off. */
async function cyclePhase(c: pg.Client) {
  const main = await cycleAgainstLimit(c, CYCLES);
  progress("cycle", {
    cycle_ms: main.cycleMs,
    limit_ms: round(main.limitMs),
    cycle_cpu_ms: round(main.cycleCpuMs),
    limit_cpu_ms: round(main.limitCpuMs),
    profile: profileFigures(main.cycle.profile, main.cycle.triggers),
  });
  // the same lower bound with every trigger and deferred check off: what the invariants cost
  await resetCycle(c);
  await runSchedulerCycle("bench");
  const writes = await readCycleWrites(c);
  await resetCycle(c);
  await c.query(`SET session_replication_role = replica`);
  const withoutTriggers = await applyLowerBound(c, writes);
  await c.query(`SET session_replication_role = DEFAULT`);
  await resetCycle(c);
  progress("limit without triggers", { ms: round(withoutTriggers) });
  const explained = await profileLowerBound(c, writes);
  const limitProfile = {
    statement_ms: round(explained.statement_ms),
    writes: Object.fromEntries(Object.entries(explained.writes).map(([k, v]) => [k, { ms: round(v.ms), wal_records: v.wal_records }])),
    checks: roundAll(explained.checks),
  };
  progress("limit profile", limitProfile);
  return {
    cycles_measured: CYCLES,
    cycle_ms: main.cycleMs,
    limit_ms: round(main.limitMs),
    cycle_to_limit: round(main.cycleMs / main.limitMs, 2),
    // CPU spent, this process and the database's backends together: steadier than time on a busy machine
    cycle_cpu_ms: round(main.cycleCpuMs),
    limit_cpu_ms: round(main.limitCpuMs),
    cycle_to_limit_cpu: round(main.cycleCpuMs / main.limitCpuMs, 2),
    limit_without_triggers_ms: round(withoutTriggers),
    limit_profile: limitProfile,
    placed: main.cycle.placed,
    placements_per_s: Math.round(main.cycle.placed / (main.cycleMs / 1000)),
    profile: profileFigures(main.cycle.profile, main.cycle.triggers),
  };
}

/** The cycle's placements allocated and freed in the GPU rows (as now) and in a narrow table keyed by GPU. */
async function allocationPhase(c: pg.Client) {
  await resetCycle(c);
  await runSchedulerCycle("bench");
  const writes = await readCycleWrites(c);
  await resetCycle(c);
  const m = await allocationModels(c, writes, Math.max(3, CYCLES));
  const figures = {
    gpus: m.gpus,
    gpu_rows_allocate_ms: round(m.rowAllocateMs),
    narrow_table_allocate_ms: round(m.narrowAllocateMs),
    allocate_ratio: round(m.rowAllocateMs / m.narrowAllocateMs, 1),
    gpu_rows_free_ms: round(m.rowFreeMs),
    narrow_table_free_ms: round(m.narrowFreeMs),
    free_ratio: round(m.rowFreeMs / m.narrowFreeMs, 1),
  };
  progress("allocation model", figures);
  return figures;
}

async function naivePhase(c: pg.Client) {
  await resetCycle(c);
  const naive = await naiveCycle(c, NAIVE_CAP_S);
  const naiveMs = naive.capped ? (naive.ms / naive.processed) * JOBS : naive.ms;
  await resetCycle(c);
  // the set-based cycle once more, on the same world, for the speed-up
  const cycle = await runSchedulerCycle("bench");
  await resetCycle(c);
  progress("naive", { ms: Math.round(naiveMs), processed: naive.processed });
  return {
    naive_cycle_ms: Math.round(naiveMs),
    naive_placed: naive.placed,
    naive_jobs_processed: naive.processed,
    speedup: round(naiveMs / cycle.duration_ms, 1),
  };
}

/** A backlog ten times the queue: the cycle reads its fair window, not all of it. */
async function bigBacklogPhase(c: pg.Client) {
  await resetCycle(c);
  await seedQueuedJobs(c, { count: BIG_BACKLOG - JOBS, tenantPrefix: "bench-tenant", tenants: TENANTS, tag: "backlog" });
  await c.query("ANALYZE jobs");
  await runSchedulerCycle("bench big backlog warm-up");
  await resetCycle(c);
  const big = await runSchedulerCycle("bench big backlog");
  progress("big backlog", big);
  await resetCycle(c);
  await c.query(`DELETE FROM jobs WHERE name LIKE 'backlog-%'`);
  await c.query("VACUUM ANALYZE jobs");
  return {
    backlog_100k_jobs: BIG_BACKLOG,
    backlog_100k_cycle_ms: big.duration_ms,
    backlog_100k_considered: big.considered,
    backlog_100k_placed: big.placed,
  };
}

/** Head-of-line: the top-priority jobs pinned to a cluster that cannot take work. */
async function deadClusterPhase(c: pg.Client) {
  await resetCycle(c);
  const cluster = (await c.query(`INSERT INTO clusters (name) VALUES ('bench-dead') RETURNING id`)).rows[0].id as string;
  await c.query(
    `INSERT INTO nodes (cluster_id, hostname, status, last_heartbeat_at) SELECT $1, 'dead-' || i, 'maintenance', now() + interval '1 day' FROM generate_series(1, $2) i`,
    [cluster, Math.max(1, Math.round(NODES / 10))],
  );
  await c.query(
    `INSERT INTO gpus (node_id, uuid, index, gpu_type, memory_total_mb) SELECT n.id, 'GPU-' || n.hostname || '-' || g, g, 'H100', 81559 FROM nodes n, generate_series(0, 7) g WHERE n.cluster_id = $1`,
    [cluster],
  );
  const pinned = await c.query(`UPDATE jobs SET cluster_id = $1 WHERE priority = 1`, [cluster]);
  await c.query("ANALYZE");
  const dead = await runSchedulerCycle("bench dead cluster");
  progress("dead cluster", dead);
  await resetCycle(c);
  await c.query(`UPDATE jobs SET cluster_id = NULL WHERE cluster_id = $1`, [cluster]);
  return { dead_cluster_pinned_jobs: pinned.rowCount ?? 0, dead_cluster_cycle_ms: dead.duration_ms, dead_cluster_placed: dead.placed };
}

/**
 * The cycle a submit wakes, on its own, where the latency phase's submits meet it: the H100 fleet
 * full, the backlog waiting for it, free L4 GPUs on a cluster of their own; each sample one 1-GPU L4
 * job submitted (straight into the database) and the "placeable" cycle that places it.
 */
async function eventCyclePhase(c: pg.Client) {
  await resetCycle(c);
  await runSchedulerCycle("bench fill the fleet");
  // as many free GPUs as the latency phase's submits find (one each), or more
  const warmUp = 5;
  const nodes = Math.ceil((Math.max(EVENT_CYCLES, SUBMIT_SAMPLES) + warmUp) / 8) + 1;
  const cluster = await seedFleet(c, { cluster: "event", nodes, gpuType: "L4", memoryMb: 23_034 });
  const tenant = (await c.query(`INSERT INTO tenants (name, gpu_quota) VALUES ('event', 100000) RETURNING id`)).rows[0].id as string;
  await c.query("ANALYZE");
  const samples: Array<{ ms: number; profile: CycleProfile }> = [];
  // the first few cycles warm plans and caches up, as the app's first submits do
  for (let i = 0; i < EVENT_CYCLES + warmUp; i++) {
    await c.query(
      `INSERT INTO jobs (tenant_id, name, gpu_count, gpu_type, priority, duration_s, status) VALUES ($1, $2, 1, 'L4', 1, 3600, 'queued')`,
      [tenant, `event-${i}`],
    );
    const profile = emptyProfile();
    const cycle = await runSchedulerCycle("bench event", { profile, scope: "placeable" });
    if (cycle.placed !== 1) throw new Error(`the event cycle placed ${cycle.placed} jobs, expected the one submitted`);
    if (i >= warmUp) samples.push({ ms: cycle.duration_ms, profile });
  }
  // the world as it was: the L4 jobs ended, their fleet gone
  await endRunningJobs(c, tenant);
  await c.query(`DELETE FROM nodes WHERE cluster_id = $1`, [cluster]);
  await resetCycle(c);
  const phases = ["lock_ms", "read_ms", "place_ms", "write_ms", "commit_ms"] as const;
  const statements = new Set(samples.flatMap((s) => Object.keys(s.profile.statements)));
  const figures = {
    event_cycles: samples.length,
    event_cycle_ms: median(samples.map((s) => s.ms)),
    event_cycle_p90_ms: percentile(
      samples.map((s) => s.ms).sort((a, b) => a - b),
      90,
    ),
    event_profile: {
      ...Object.fromEntries(phases.map((p) => [p, round(median(samples.map((s) => s.profile[p])))])),
      by_statement: Object.fromEntries(
        [...statements]
          .map((st) => [st, round(median(samples.map((s) => s.profile.statements[st] ?? 0)))] as const)
          .sort((a, b) => b[1] - a[1]),
      ),
    },
  };
  progress("event cycle", figures);
  return figures;
}

/**
 * The app serving the world, its background jobs running, and free L4 GPUs for a tenant of its
 * own: one for every submit of a latency run (they keep them until the run ends).
 */
async function serveApp(c: pg.Client, databaseUrl: string) {
  const warmUp = Math.max(5, Math.round(SUBMIT_RATE));
  await seedFleet(c, { cluster: "latency", nodes: Math.ceil((SUBMIT_SAMPLES + warmUp) / 8) + 1, gpuType: "L4", memoryMb: 23_034 });
  const tenant = (await c.query(`INSERT INTO tenants (name, gpu_quota) VALUES ('latency', 100000) RETURNING id`)).rows[0].id as string;
  const metricsToken = randomBytes(24).toString("hex");
  const { key } = await createApiKey(systemActor, { name: "bench", scope: "tenant", tenant_id: tenant });
  await disconnectDb();
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    NEXTAUTH_SECRET: "bench-secret-0123456789abcdef0123456789",
    NODE_ENV: "production",
    LOG_LEVEL: "warn",
    // production servers name the nodes' networks and their public address (lib/env.ts)
    NODE_ADDRESS_NETWORKS: "127.0.0.0/8",
    // what the background jobs did during each run (bench/lib/background-runs.ts)
    METRICS_TOKEN: metricsToken,
  } as NodeJS.ProcessEnv;
  if (!buildIsFresh()) nextBuild(env);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const served = startNext({ port, env: { ...env, NEXTAUTH_URL: baseUrl }, quiet: true });
  await waitForHealthy(baseUrl);
  const submit = async (count: number, rate: number) => {
    const runsBefore = await readBackgroundRuns(baseUrl, metricsToken);
    const maintenanceBefore = await readDatabaseMaintenance(c);
    const cpu = processCpuMark();
    const started = performance.now();
    const samples = await submitAtRate({
      baseUrl,
      key,
      watch: c,
      ratePerS: rate,
      count,
      warmUp,
      job: { gpu_type: "L4", gpu_count: 1, priority: 1, duration_s: 3600 },
    });
    const seconds = (performance.now() - started) / 1000;
    const cores = coresUsed(cpu.since(), cpu.machine(), seconds);
    const background = backgroundRunsBetween(runsBefore, await readBackgroundRuns(baseUrl, metricsToken));
    const maintenance = databaseMaintenanceBetween(maintenanceBefore, await readDatabaseMaintenance(c));
    const figures = await latencyFigures(c, samples);
    await endRunningJobs(c, tenant);
    // cores: what each side used on average over the run (the machine's two cores are the limit);
    // background_runs: what the app's background jobs ran meanwhile, by job; database_maintenance:
    // what autovacuum ran meanwhile (its vacuum and analyze of jobs compete for the same cores)
    return { ...figures, cores, background_runs: background, database_maintenance: maintenance };
  };
  return { app: served, submit };
}

/** Submit → running with the queue of JOBS jobs waiting for the full H100 fleet, and without it. */
async function latencyPhase(c: pg.Client, served: Awaited<ReturnType<typeof serveApp>>) {
  await resetCycle(c);
  await runSchedulerCycle("bench fill the fleet");
  const before = (await c.query(`SELECT count(*)::int AS n FROM jobs WHERE status IN ('queued', 'blocked')`)).rows[0].n as number;
  await seedQueuedJobs(c, { count: Math.max(0, JOBS - before), tenantPrefix: "bench-tenant", tenants: TENANTS, tag: "waiting" });
  await c.query("ANALYZE");
  const waiting = (await c.query(`SELECT count(*)::int AS n FROM jobs WHERE status IN ('queued', 'blocked')`)).rows[0].n as number;
  // a backlog that is there, not one just written: the app's sweeps have been over it once (its
  // reasons are written) before the submits start
  await backlogSwept(c);
  const withBacklog = await served.submit(SUBMIT_SAMPLES, SUBMIT_RATE);
  progress("submit → running with the backlog", { ...withBacklog, p99_samples: undefined });
  // the same without the backlog: its jobs cancelled
  await c.query(`UPDATE jobs SET status = 'cancelled', block_reason = NULL, finished_at = now() WHERE status IN ('queued', 'blocked')`);
  const withoutBacklog = await served.submit(SUBMIT_SAMPLES, SUBMIT_RATE);
  progress("submit → running without it", { ...withoutBacklog, p99_samples: undefined });
  // the world as it was for the phases after this one
  await c.query(`DELETE FROM jobs WHERE name LIKE 'waiting-%'`);
  await c.query(`UPDATE jobs SET status = 'queued', finished_at = NULL WHERE status = 'cancelled' AND name LIKE 'job-%'`);
  await resetCycle(c);
  return {
    submit_to_running: { rate_per_s: SUBMIT_RATE, backlog_waiting_jobs: waiting, ...withBacklog },
    submit_to_running_no_backlog: { rate_per_s: SUBMIT_RATE, ...withoutBacklog },
  };
}

/** Waits until the app has gone over the waiting work once since now: every backlog job has the reason a cycle gave it. */
async function backlogSwept(c: pg.Client) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { rows } = await c.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs WHERE status IN ('queued', 'blocked') AND pending_reason IS NOT DISTINCT FROM 'bench'`,
    );
    if (rows[0]!.n === 0) return;
    if (Date.now() > deadline) throw new Error(`the app's cycles left ${rows[0]!.n} backlog jobs without a reason for 60 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Fairness: one tenant holds FAIR_BACKLOG quota-blocked jobs at the best priority while another submits over HTTP. */
async function fairWindowSubmits(c: pg.Client, served: Awaited<ReturnType<typeof serveApp>>) {
  const hog = (await c.query(`INSERT INTO tenants (name, gpu_quota) VALUES ('backlog', 0) RETURNING id`)).rows[0].id as string;
  await c.query(
    `INSERT INTO jobs (tenant_id, name, gpu_count, gpu_type, priority, status, block_reason, pending_reason, submitted_at)
     SELECT $1, 'hog-' || i, 1, 'L4', 1, 'blocked', 'quota', 'bench', now() - interval '1 hour' + i * interval '1 ms' FROM generate_series(1, $2) i`,
    [hog, FAIR_BACKLOG],
  );
  await c.query("ANALYZE jobs");
  return served.submit(Math.max(10, Math.round(SUBMIT_SAMPLES / 20)), Math.max(2, SUBMIT_RATE / 10));
}

/** …and a newcomer's single job in one cycle: placed, and the rows that cycle read, against the old single window. */
async function fairWindowCycle(c: pg.Client) {
  const newcomer = (await c.query(`INSERT INTO tenants (name, gpu_quota) VALUES ('newcomer', 8) RETURNING id`)).rows[0].id as string;
  const newJob = (
    await c.query(
      `INSERT INTO jobs (tenant_id, name, gpu_count, gpu_type, priority, status) VALUES ($1, 'newcomer', 1, 'L4', 10, 'queued') RETURNING id`,
      [newcomer],
    )
  ).rows[0].id as string;
  const cycle = await runSchedulerCycle("bench fair window");
  const placed = (await c.query(`SELECT status FROM jobs WHERE id = $1`, [newJob])).rows[0].status === "running";
  const t0 = performance.now();
  const oldWindow = await c.query(
    `SELECT id, tenant_id, gpu_count, gpu_type, cluster_id, priority, (extract(epoch FROM submitted_at) * 1000)::bigint AS submitted_ms, duration_s, status
       FROM jobs WHERE status IN ('queued', 'blocked') AND (block_reason IS NULL OR block_reason = 'quota') AND (not_before IS NULL OR not_before <= now())
      ORDER BY priority, submitted_at LIMIT 50000`,
  );
  const oldWindowMs = performance.now() - t0;
  progress("fair window", cycle);
  return {
    fair_window_blocked_jobs: FAIR_BACKLOG,
    fair_window_cycle_ms: cycle.duration_ms,
    fair_window_cycle_considered: cycle.considered,
    fair_window_newcomer_placed: flag(placed),
    fair_window_old_window_query_ms: round(oldWindowMs),
    fair_window_old_window_included_newcomer: flag(oldWindow.rows.some((r) => r.id === newJob)),
  };
}

/** The fleet and its queue at 1×, 4× and 10×, each world alone in the database. */
async function growthPhase(c: pg.Client) {
  const growth = [];
  for (const m of GROWTH) {
    await c.query("TRUNCATE clusters, tenants CASCADE");
    await c.query("VACUUM ANALYZE");
    await seedFleet(c, { cluster: "bench", nodes: NODES * m, gpuType: "H100" });
    await seedTenants(c, "bench-tenant", TENANTS * m, QUOTA);
    await seedQueuedJobs(c, { count: JOBS * m, tenantPrefix: "bench-tenant", tenants: TENANTS * m, tag: "job" });
    await c.query("ANALYZE");
    await runSchedulerCycle("bench growth warm-up");
    const r = await cycleAgainstLimit(c, SMOKE ? 1 : 3);
    progress(`growth ${m}×`, {
      cycle_ms: r.cycleMs,
      limit_ms: round(r.limitMs),
      cycle_cpu_ms: round(r.cycleCpuMs),
      limit_cpu_ms: round(r.limitCpuMs),
    });
    growth.push({
      multiple: m,
      gpus: NODES * m * 8,
      jobs: JOBS * m,
      considered: r.cycle.considered,
      placed: r.cycle.placed,
      cycle_ms: r.cycleMs,
      limit_ms: round(r.limitMs),
      cycle_to_limit: round(r.cycleMs / r.limitMs, 2),
      cycle_cpu_ms: round(r.cycleCpuMs),
      limit_cpu_ms: round(r.limitCpuMs),
      cycle_to_limit_cpu: round(r.cycleCpuMs / r.limitCpuMs, 2),
      read_ms: round(r.cycle.profile.read_ms),
      place_ms: round(r.cycle.profile.place_ms),
      write_ms: round(r.cycle.profile.write_ms),
      commit_ms: round(r.cycle.profile.commit_ms),
    });
  }
  return growth;
}
