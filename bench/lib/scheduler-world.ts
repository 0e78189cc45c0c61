import type pg from "pg";
import { readProcesses } from "../../scripts/lib/proc-stats";
import { median } from "../../scripts/lib/stats";

// bench:scheduler's world, written set-based (the benchmark measures scheduling, not seeding), and
// the two baselines a cycle is compared with in the same run: the database's own cost of applying
// the same placements (one statement, no decisions), and the original one-job-at-a-time design.

/** `nodes` available nodes × 8 GPUs of `gpuType` in a cluster of their own, in 10 pods × 100 racks. */
export async function seedFleet(c: pg.ClientBase, opts: { cluster: string; nodes: number; gpuType: string; memoryMb?: number }) {
  const cluster = (await c.query<{ id: string }>(`INSERT INTO clusters (name) VALUES ($1) RETURNING id`, [opts.cluster])).rows[0]!.id;
  await c.query(
    `INSERT INTO nodes (cluster_id, hostname, pod, rack, status, last_heartbeat_at)
     SELECT $1, $2 || '-' || i, 'pod-' || (i % 10), 'rack-' || (i % 100), 'available', now() + interval '1 day'
       FROM generate_series(1, $3) i`,
    [cluster, opts.cluster, opts.nodes],
  );
  await c.query(
    `INSERT INTO gpus (node_id, uuid, index, gpu_type, memory_total_mb)
     SELECT n.id, 'GPU-' || n.hostname || '-' || g, g, $2, $3 FROM nodes n, generate_series(0, 7) g WHERE n.cluster_id = $1`,
    [cluster, opts.gpuType, opts.memoryMb ?? 81_559],
  );
  return cluster;
}

/** `count` tenants named `prefix-1…`, each with `quota` GPUs. */
export async function seedTenants(c: pg.ClientBase, prefix: string, count: number, quota: number) {
  await c.query(`INSERT INTO tenants (name, gpu_quota) SELECT $1 || '-' || i, $3 FROM generate_series(1, $2) i`, [prefix, count, quota]);
}

/**
 * `count` queued jobs of mixed sizes (mostly small, some whole nodes and multi-node gangs),
 * priorities 1–10, spread over the `prefix` tenants and over time (a third declare no duration).
 */
export async function seedQueuedJobs(c: pg.ClientBase, opts: { count: number; tenantPrefix: string; tenants: number; tag: string }) {
  await c.query(
    `INSERT INTO jobs (tenant_id, name, gpu_count, gpu_type, priority, duration_s, status, submitted_at, pending_reason)
     SELECT t.id, $4 || '-' || i, (ARRAY[1,1,1,1,2,2,4,8,16])[1 + (i * 7) % 9], 'H100', 1 + (i * 13) % 10,
            CASE WHEN i % 3 = 0 THEN NULL ELSE 600 + (i % 50) * 60 END, 'queued', now() - make_interval(secs => $1 - i), 'bench'
       FROM generate_series(1, $1) i JOIN LATERAL (SELECT id FROM tenants WHERE name = $2 || '-' || (1 + i % $3)) t ON true`,
    [opts.count, opts.tenantPrefix, opts.tenants, opts.tag],
  );
}

/** Every job of the world back in the queue and every GPU free, as before the cycle. */
export async function resetCycle(c: pg.ClientBase) {
  // jobs first, then their GPUs, as every writer does (the allocation check runs per statement)
  await c.query("BEGIN");
  await c.query(
    `UPDATE jobs SET status = 'queued', block_reason = NULL, started_at = NULL, attempts = 0, fence = NULL, pending_reason = 'bench'
      WHERE status IN ('running', 'queued', 'blocked')`,
  );
  await c.query(`UPDATE gpus SET allocated_job_id = NULL WHERE allocated_job_id IS NOT NULL`);
  await c.query("COMMIT");
  await c.query(`DELETE FROM job_events`);
  // the reset ended the previous cycle's runs, which billed them and closed their placements; the
  // next cycle's runs reuse attempt numbers
  await c.query(`DELETE FROM usage_events`);
  await c.query(`DELETE FROM job_placements`);
  await c.query(`DELETE FROM scheduler_logs`);
  await c.query(`VACUUM ANALYZE jobs, gpus, job_placements, job_events`);
}

/** What a cycle wrote, read back: every placement (its GPUs and nodes) and the reasons of the jobs left waiting. */
export interface CycleWrites {
  placed: Array<{ job_id: string; gpu_ids: string[]; node_ids: string[] }>;
  waiting: Array<{ id: string; reason: string }>;
}

export async function readCycleWrites(c: pg.ClientBase): Promise<CycleWrites> {
  const placed = await c.query<CycleWrites["placed"][number]>(
    `SELECT job_id, gpu_ids, node_ids FROM job_placements WHERE ended_at IS NULL`,
  );
  const waiting = await c.query<CycleWrites["waiting"][number]>(
    `SELECT id, pending_reason AS reason FROM jobs WHERE status IN ('queued', 'blocked') AND pending_reason IS DISTINCT FROM 'bench'`,
  );
  return { placed: placed.rows, waiting: waiting.rows };
}

/**
 * The database's own cost of the cycle's writes: the same rows in one set-based statement with no
 * decisions — the placed jobs start (status, attempt, fence), their GPUs are allocated, their
 * placements (fences) and events are inserted, the waiting jobs get their reasons — and the commit,
 * where the deferred checks run. Every trigger and constraint fires as it does for the cycle.
 */
export async function applyLowerBound(c: pg.ClientBase, w: CycleWrites): Promise<number> {
  const values = lowerBoundValues(w);
  const t0 = performance.now();
  await c.query("BEGIN");
  await c.query(LOWER_BOUND_SQL, values);
  await c.query("COMMIT");
  return performance.now() - t0;
}

// the lower bound's statement: each write a CTE named for what it writes
const LOWER_BOUND_SQL = `WITH jobs_started AS (
       UPDATE jobs j SET status = 'running', started_at = clock_timestamp(), attempts = j.attempts + 1, fence = gen_random_uuid(),
              block_reason = NULL, pending_reason = NULL, not_before = NULL, updated_at = now()
         FROM unnest($1::uuid[]) AS x(id) WHERE j.id = x.id
       RETURNING j.id, j.attempts, j.fence, j.started_at
     ), gpus_allocated AS (
       UPDATE gpus g SET allocated_job_id = x.job_id, updated_at = now() FROM unnest($4::uuid[], $5::uuid[]) AS x(gpu_id, job_id) WHERE g.id = x.gpu_id
     ), placements AS (
       INSERT INTO job_placements (job_id, attempt, fence, gpu_ids, node_ids, started_at)
       SELECT s.id, s.attempts, s.fence, x.gpu_ids::uuid[], x.node_ids::uuid[], s.started_at
         FROM jobs_started s JOIN unnest($1::uuid[], $2::text[], $3::text[]) AS x(id, gpu_ids, node_ids) ON x.id = s.id
     ), reasons AS (
       UPDATE jobs j SET pending_reason = x.reason, updated_at = now() FROM unnest($6::uuid[], $7::text[]) AS x(id, reason) WHERE j.id = x.id
     )
     INSERT INTO job_events (job_id, from_status, to_status, reason, actor) SELECT id, 'queued', 'running', 'placed', 'bench' FROM jobs_started`;

function lowerBoundValues(w: CycleWrites) {
  return [
    w.placed.map((p) => p.job_id),
    w.placed.map((p) => `{${p.gpu_ids.join(",")}}`),
    w.placed.map((p) => `{${p.node_ids.join(",")}}`),
    w.placed.flatMap((p) => p.gpu_ids),
    w.placed.flatMap((p) => p.gpu_ids.map(() => p.job_id)),
    w.waiting.map((x) => x.id),
    w.waiting.map((x) => x.reason),
  ];
}

interface PlanNode {
  "Node Type": string;
  "Subplan Name"?: string;
  "Actual Total Time": number;
  "WAL Records"?: number;
  Plans?: PlanNode[];
}

/**
 * Where the lower bound's own time goes: its statement under EXPLAIN ANALYZE, with the deferred
 * checks made immediate so that they show, rolled back. Each write (ms and WAL records: a row
 * version and its index entries) and each check, foreign keys included (ms), as the database
 * reports them. A write's time includes its row triggers that run before it; the other checks run
 * after the statement and add to it.
 */
export async function profileLowerBound(c: pg.ClientBase, w: CycleWrites) {
  await c.query("BEGIN");
  try {
    await c.query("SET CONSTRAINTS ALL IMMEDIATE");
    const { rows } = await c.query<{
      "QUERY PLAN": Array<{
        Plan: PlanNode;
        Triggers?: Array<{ "Trigger Name": string; "Constraint Name"?: string; Time: number }>;
        "Execution Time": number;
      }>;
    }>(`EXPLAIN (ANALYZE, WAL, FORMAT JSON) ${LOWER_BOUND_SQL}`, lowerBoundValues(w));
    const out = rows[0]!["QUERY PLAN"][0]!;
    const writes: Record<string, { ms: number; wal_records: number }> = {};
    const visit = (n: PlanNode, cte: string | undefined) => {
      const name = n["Subplan Name"]?.replace(/^CTE /, "") ?? cte;
      if (n["Node Type"] === "ModifyTable" && name && !writes[name])
        writes[name] = { ms: n["Actual Total Time"], wal_records: n["WAL Records"] ?? 0 };
      for (const child of n.Plans ?? []) visit(child, n["Node Type"] === "ModifyTable" ? undefined : name);
    };
    visit(out.Plan, "events");
    // the events insert reads jobs_started, which runs inside it: its own time and WAL are the rest
    writes.events!.ms -= writes.jobs_started!.ms;
    writes.events!.wal_records -= writes.jobs_started!.wal_records;
    const checks: Record<string, number> = {};
    for (const t of out.Triggers ?? []) {
      const name = t["Constraint Name"] ?? t["Trigger Name"];
      checks[name] = (checks[name] ?? 0) + t.Time;
    }
    return { statement_ms: out["Execution Time"], writes, checks };
  } finally {
    await c.query("ROLLBACK");
  }
}

/**
 * What an allocation costs the database in two data models, on the cycle's own placements: as now,
 * an update of each GPU's row (a copy of the gpus table with every index and check it has, no
 * triggers), against an insert into a narrow table keyed by GPU (gpu_id, job_id); and the free of
 * the same GPUs in each. Each figure is the median of `runs`, the tables vacuumed before each.
 */
export async function allocationModels(c: pg.ClientBase, w: CycleWrites, runs: number) {
  const gpuIds = w.placed.flatMap((p) => p.gpu_ids);
  const jobIds = w.placed.flatMap((p) => p.gpu_ids.map(() => p.job_id));
  const placedJobs = w.placed.map((p) => p.job_id);
  await c.query(`DROP TABLE IF EXISTS bench_gpu_rows, bench_gpu_allocations`);
  await c.query(`CREATE TABLE bench_gpu_rows (LIKE gpus INCLUDING ALL)`);
  await c.query(`INSERT INTO bench_gpu_rows SELECT * FROM gpus`);
  await c.query(
    `CREATE TABLE bench_gpu_allocations (gpu_id uuid PRIMARY KEY, job_id uuid NOT NULL, allocated_at timestamptz NOT NULL DEFAULT now())`,
  );
  await c.query(`CREATE INDEX ON bench_gpu_allocations (job_id)`);
  // in this order each run: each model's allocation, then each model's free of the same GPUs
  const steps = {
    rowAllocateMs: [
      `UPDATE bench_gpu_rows g SET allocated_job_id = x.job_id, updated_at = now() FROM unnest($1::uuid[], $2::uuid[]) AS x(gpu_id, job_id) WHERE g.id = x.gpu_id`,
      [gpuIds, jobIds],
    ],
    narrowAllocateMs: [`INSERT INTO bench_gpu_allocations (gpu_id, job_id) SELECT * FROM unnest($1::uuid[], $2::uuid[])`, [gpuIds, jobIds]],
    rowFreeMs: [
      `UPDATE bench_gpu_rows SET allocated_job_id = NULL, updated_at = now() WHERE allocated_job_id = ANY($1::uuid[])`,
      [placedJobs],
    ],
    narrowFreeMs: [`DELETE FROM bench_gpu_allocations WHERE job_id = ANY($1::uuid[])`, [placedJobs]],
  } satisfies Record<string, [string, unknown[]]>;
  const times = Object.fromEntries(Object.keys(steps).map((k) => [k, [] as number[]])) as Record<keyof typeof steps, number[]>;
  try {
    for (let i = 0; i < runs; i++)
      for (const [name, [sql, params]] of Object.entries(steps) as Array<[keyof typeof steps, [string, unknown[]]]>) {
        await c.query(`VACUUM ANALYZE bench_gpu_rows, bench_gpu_allocations`);
        const t0 = performance.now();
        await c.query("BEGIN");
        await c.query(sql, params);
        await c.query("COMMIT");
        times[name].push(performance.now() - t0);
      }
  } finally {
    await c.query(`DROP TABLE IF EXISTS bench_gpu_rows, bench_gpu_allocations`);
  }
  return {
    gpus: gpuIds.length,
    rowAllocateMs: median(times.rowAllocateMs),
    narrowAllocateMs: median(times.narrowAllocateMs),
    rowFreeMs: median(times.rowFreeMs),
    narrowFreeMs: median(times.narrowFreeMs),
  };
}

/** The original design: one job at a time, a query per check, a transaction per job; stopped after `capS` seconds. */
export async function naiveCycle(
  c: pg.ClientBase,
  capS: number,
): Promise<{ ms: number; processed: number; placed: number; capped: boolean }> {
  const started = performance.now();
  const { rows: queue } = await c.query<{ id: string }>(`SELECT id FROM jobs WHERE status = 'queued' ORDER BY priority, submitted_at`);
  let processed = 0;
  let placed = 0;
  for (const { id } of queue) {
    if ((performance.now() - started) / 1000 > capS) return { ms: performance.now() - started, processed, placed, capped: true };
    processed++;
    await c.query("BEGIN");
    const job = (await c.query(`SELECT tenant_id, gpu_count, gpu_type FROM jobs WHERE id = $1 FOR UPDATE`, [id])).rows[0];
    const quota = (await c.query(`SELECT gpu_quota FROM tenants WHERE id = $1`, [job.tenant_id])).rows[0].gpu_quota;
    const used = (
      await c.query(`SELECT count(*)::int AS n FROM gpus g JOIN jobs j ON j.id = g.allocated_job_id WHERE j.tenant_id = $1`, [
        job.tenant_id,
      ])
    ).rows[0].n;
    if (used + job.gpu_count > quota) {
      await c.query("COMMIT");
      continue;
    }
    const free = await c.query<{ id: string }>(
      `SELECT g.id FROM gpus g JOIN nodes n ON n.id = g.node_id WHERE g.gpu_type = $1 AND g.status = 'available' AND g.allocated_job_id IS NULL AND n.status = 'available'
        ORDER BY n.id, g.index LIMIT $2 FOR UPDATE OF g SKIP LOCKED`,
      [job.gpu_type, job.gpu_count],
    );
    if (free.rows.length < job.gpu_count) {
      await c.query("COMMIT");
      continue;
    }
    // a running job carries its placement's fence (the database refuses one without), as the cycle's does
    await c.query(
      `UPDATE jobs SET status = 'running', started_at = now(), attempts = attempts + 1, fence = gen_random_uuid() WHERE id = $1`,
      [id],
    );
    // the gang in one statement (the database refuses a half-allocated running job at statement end);
    // this makes the baseline a little faster than the original's statement per GPU
    await c.query(`UPDATE gpus SET allocated_job_id = $1 WHERE id = ANY($2::uuid[])`, [id, free.rows.map((g) => g.id)]);
    await c.query(
      `INSERT INTO job_events (job_id, from_status, to_status, reason, actor) VALUES ($1, 'queued', 'running', 'naive', 'bench')`,
      [id],
    );
    await c.query("COMMIT");
    placed++;
  }
  return { ms: performance.now() - started, processed, placed, capped: false };
}

/** Time spent in each PL/pgSQL function (the triggers) since `before`, ms, from pg_stat_user_functions (track_functions = 'pl'). */
export async function functionTimes(c: pg.ClientBase): Promise<Map<string, number>> {
  await c.query(`SELECT pg_stat_force_next_flush()`);
  const { rows } = await c.query<{ name: string; self_ms: number }>(
    `SELECT funcname AS name, self_time AS self_ms FROM pg_stat_user_functions`,
  );
  return new Map(rows.map((r) => [r.name, Number(r.self_ms)]));
}

/**
 * CPU milliseconds of this process and of every backend connected to the database, from /proc: on
 * a machine other work keeps busy, CPU spent says more than time waited, so the cycle and its lower
 * bound are compared by both. `cpuSince(await cpuMark(c))` is what they spent since the mark
 * (a backend that connected since counts whole; one that has gone is lost to both sides).
 */
export async function cpuMark(c: pg.ClientBase): Promise<{ own: number; backends: Map<number, number> }> {
  const { rows } = await c.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`);
  const procs = readProcesses();
  if (!procs) throw new Error("bench:scheduler reads CPU time from /proc (Linux)");
  const own = process.cpuUsage();
  return {
    own: (own.user + own.system) / 1000,
    backends: new Map(rows.flatMap((r) => (procs.has(r.pid) ? [[r.pid, procs.get(r.pid)!.cpuSeconds * 1000] as const] : []))),
  };
}

export async function cpuSince(c: pg.ClientBase, mark: Awaited<ReturnType<typeof cpuMark>>): Promise<number> {
  const now = await cpuMark(c);
  let ms = now.own - mark.own;
  for (const [pid, cpu] of now.backends) ms += cpu - (mark.backends.get(pid) ?? 0);
  return ms;
}
