import type pg from "pg";
import { percentile, round } from "./harness";
import { postJson } from "./post-json";

// Submit → running at a steady rate, end to end: each job is submitted over HTTP (POST /api/jobs,
// the real stack: key, validation, quota, the event that wakes the scheduler) and is running the
// moment the cycle that placed it has committed. The benchmark sees that moment from its own
// database connection, which looks for every outstanding job's status every 2 ms in one query
// (polling each job over HTTP at 50 submits/s would itself be a few hundred requests a second on
// the app under test). The jobs keep their GPUs: the fleet must have one free for every submit,
// and endRunningJobs frees them between runs.

export interface LatencySample {
  jobId: string;
  /** epoch ms, sub-millisecond: sent, answered, seen running */
  sentAt: number;
  answeredAt: number;
  runningAt: number;
}

const now = () => performance.timeOrigin + performance.now();

/**
 * `count` submits at `ratePerS` (open loop: one every 1/rate s whatever the answers do), after
 * `warmUp` that are sent the same way and not counted.
 */
export async function submitAtRate(opts: {
  baseUrl: string;
  key: string;
  watch: pg.ClientBase;
  ratePerS: number;
  count: number;
  warmUp: number;
  job: { gpu_type: string; gpu_count: number; priority: number; duration_s: number };
  timeoutMs?: number;
}): Promise<LatencySample[]> {
  const outstanding = new Map<string, { sentAt: number; answeredAt: number; counted: boolean }>();
  const done: LatencySample[] = [];
  const failures: string[] = [];
  const total = opts.count + opts.warmUp;
  let submitted = 0;
  let watching = true;

  const watcher = (async () => {
    while (watching) {
      const ids = [...outstanding.keys()];
      if (ids.length) {
        const { rows } = await opts.watch.query<{ id: string }>(`SELECT id FROM jobs WHERE id = ANY($1::uuid[]) AND status = 'running'`, [
          ids,
        ]);
        const at = now();
        for (const { id } of rows) {
          const o = outstanding.get(id)!;
          outstanding.delete(id);
          if (o.counted) done.push({ jobId: id, sentAt: o.sentAt, answeredAt: o.answeredAt, runningAt: at });
        }
      }
      await new Promise((r) => setTimeout(r, 2));
    }
  })();

  const t0 = now();
  const sends: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / opts.ratePerS;
    const wait = due - now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const sentAt = now();
    const counted = i >= opts.warmUp;
    sends.push(
      postJson(`${opts.baseUrl}/api/jobs`, opts.key, JSON.stringify({ name: `latency-${i}`, ...opts.job })).then((res) => {
        const answeredAt = now();
        const job = (res.body as { job?: { id: string } }).job;
        if (res.status !== 201 || !job) return void failures.push(`HTTP ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`);
        outstanding.set(job.id, { sentAt, answeredAt, counted });
        submitted++;
      }),
    );
  }
  await Promise.all(sends);
  const deadline = now() + (opts.timeoutMs ?? 30_000);
  while (outstanding.size && now() < deadline && failures.length === 0) await new Promise((r) => setTimeout(r, 10));
  watching = false;
  await watcher;
  if (failures.length) throw new Error(`submits failed: ${failures.slice(0, 3).join("; ")}`);
  if (outstanding.size) throw new Error(`${outstanding.size} of ${submitted} jobs did not start within ${opts.timeoutMs ?? 30_000} ms`);
  return done.sort((a, b) => a.runningAt - a.sentAt - (b.runningAt - b.sentAt));
}

/** Ends a tenant's running jobs and frees their GPUs (jobs first, then their GPUs, as every writer does). */
export async function endRunningJobs(c: pg.ClientBase, tenantId: string) {
  await c.query("BEGIN");
  const { rows } = await c.query<{ id: string }>(
    `UPDATE jobs SET status = 'cancelled', finished_at = now() WHERE tenant_id = $1 AND status = 'running' RETURNING id`,
    [tenantId],
  );
  await c.query(`UPDATE gpus SET allocated_job_id = NULL WHERE allocated_job_id = ANY($1::uuid[])`, [rows.map((r) => r.id)]);
  await c.query("COMMIT");
}

/**
 * Where the slowest samples' time went, from what the database recorded of them: the request (sent
 * → answered, as the client saw it), the wake-up (answered → the start of the cycle that placed
 * the job: its transaction's start, which its job event carries; negative when that cycle had
 * begun before the answer arrived), the cycle (its reads, placement and writes, as it logged them)
 * and the commit (the cycle's end → the job seen running, the commit's deferred checks and the
 * 2 ms look included).
 */
async function breakdown(c: pg.ClientBase, samples: LatencySample[]) {
  const { rows } = await c.query<{ job_id: string; cycle_start_ms: number; cycle_ms: number | null }>(
    `SELECT e.job_id, extract(epoch FROM e.created_at) * 1000 AS cycle_start_ms, l.duration_ms AS cycle_ms
       FROM job_events e LEFT JOIN LATERAL (
         SELECT duration_ms FROM scheduler_logs l WHERE l.created_at = e.created_at AND l.placed > 0 ORDER BY id LIMIT 1
       ) l ON true
      WHERE e.job_id = ANY($1::uuid[]) AND e.to_status = 'running'`,
    [samples.map((s) => s.jobId)],
  );
  const byJob = new Map(rows.map((r) => [r.job_id, r]));
  return samples.map((s) => {
    const r = byJob.get(s.jobId);
    const cycleStart = r ? Number(r.cycle_start_ms) : s.answeredAt;
    const cycle = r?.cycle_ms ?? 0;
    return {
      total_ms: round(s.runningAt - s.sentAt),
      request_ms: round(s.answeredAt - s.sentAt),
      wake_up_ms: round(cycleStart - s.answeredAt),
      cycle_ms: cycle,
      commit_ms: round(s.runningAt - cycleStart - cycle),
    };
  });
}

/**
 * The scheduler's cycles while the samples ran (from the first send to the last seen running), by
 * kind: those woken by events and the sweeps, with their durations as they logged them.
 */
async function cyclesDuring(c: pg.ClientBase, samples: LatencySample[]) {
  if (samples.length === 0) return {};
  const from = Math.min(...samples.map((s) => s.sentAt));
  const to = Math.max(...samples.map((s) => s.runningAt));
  const { rows } = await c.query<{ kind: string; cycles: number; placed: number; p50_ms: number; p99_ms: number; max_ms: number }>(
    `SELECT CASE WHEN trigger LIKE 'event%' THEN 'event' ELSE 'sweep' END AS kind, count(*)::int AS cycles, sum(placed)::int AS placed,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50_ms,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99_ms, max(duration_ms) AS max_ms
       FROM scheduler_logs WHERE created_at BETWEEN to_timestamp($1 / 1000.0) AND to_timestamp($2 / 1000.0)
      GROUP BY 1 ORDER BY 1`,
    [from, to],
  );
  return Object.fromEntries(
    rows.map((r) => [r.kind, { cycles: r.cycles, placed: r.placed, p50_ms: round(r.p50_ms), p99_ms: round(r.p99_ms), max_ms: r.max_ms }]),
  );
}

/** p50/p99/max of the totals, the breakdown of every sample at or above the p99, and the cycles that ran. */
export async function latencyFigures(c: pg.ClientBase, samples: LatencySample[]) {
  const totals = samples.map((s) => s.runningAt - s.sentAt).sort((a, b) => a - b);
  const p99 = percentile(totals, 99);
  const slowest = samples.filter((s) => s.runningAt - s.sentAt >= p99);
  const parts = await breakdown(c, slowest);
  const mean = (k: keyof (typeof parts)[number]) => round(parts.reduce((n, p) => n + p[k], 0) / Math.max(1, parts.length));
  return {
    samples: samples.length,
    p50_ms: round(percentile(totals, 50)),
    p99_ms: round(p99),
    max_ms: round(totals.at(-1) ?? 0),
    // the mean of each part over the samples at or above the p99, and each of them
    p99_breakdown: {
      samples: parts.length,
      request_ms: mean("request_ms"),
      wake_up_ms: mean("wake_up_ms"),
      cycle_ms: mean("cycle_ms"),
      commit_ms: mean("commit_ms"),
    },
    p99_samples: parts,
    cycles: await cyclesDuring(c, samples),
  };
}
