// What the app's background jobs did over a stretch of a benchmark, from its Prometheus exposition
// (GET /api/metrics with METRICS_TOKEN): runs and the seconds they took, by job. A latency run's
// slowest samples line up with whatever else the app and its database were doing; this says what.

interface JobRuns {
  runs: number;
  seconds: number;
}

const SERIES = /^gpuforge_background_run_duration_seconds_(sum|count)\{job="([^"]+)"\} (\S+)$/;

export async function readBackgroundRuns(baseUrl: string, token: string): Promise<Map<string, JobRuns>> {
  const res = await fetch(`${baseUrl}/api/metrics`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`GET /api/metrics: HTTP ${res.status}`);
  const jobs = new Map<string, JobRuns>();
  for (const line of (await res.text()).split("\n")) {
    const m = SERIES.exec(line);
    if (!m) continue;
    const job = jobs.get(m[2]!) ?? { runs: 0, seconds: 0 };
    if (m[1] === "sum") job.seconds = Number(m[3]);
    else job.runs = Number(m[3]);
    jobs.set(m[2]!, job);
  }
  return jobs;
}

/** The runs between two readings, by job (jobs that did not run left out), and their total milliseconds. */
export function backgroundRunsBetween(before: Map<string, JobRuns>, after: Map<string, JobRuns>) {
  const jobs: Record<string, { runs: number; ms: number }> = {};
  for (const [job, a] of after) {
    const b = before.get(job) ?? { runs: 0, seconds: 0 };
    if (a.runs > b.runs) jobs[job] = { runs: a.runs - b.runs, ms: Math.round((a.seconds - b.seconds) * 1000) };
  }
  return jobs;
}

interface TableMaintenance {
  autovacuums: number;
  autoanalyzes: number;
}

/** The database's own background work so far, by table: autovacuum and autoanalyze runs (pg_stat_user_tables). */
export async function readDatabaseMaintenance(c: { query: (sql: string) => Promise<{ rows: unknown[] }> }) {
  const { rows } = await c.query(
    `SELECT relname AS table, autovacuum_count::int AS autovacuums, autoanalyze_count::int AS autoanalyzes FROM pg_stat_user_tables`,
  );
  return new Map((rows as Array<TableMaintenance & { table: string }>).map((r) => [r.table, r]));
}

/**
 * What autovacuum did between two readings: its runs over every table, and those on jobs (the table
 * a stream of submits churns, so the one whose vacuum and analyze land inside a latency run).
 */
export function databaseMaintenanceBetween(before: Map<string, TableMaintenance>, after: Map<string, TableMaintenance>) {
  const delta = (t: string, k: keyof TableMaintenance) => (after.get(t)?.[k] ?? 0) - (before.get(t)?.[k] ?? 0);
  const tables = [...after.keys()];
  return {
    autovacuums: tables.reduce((n, t) => n + delta(t, "autovacuums"), 0),
    autoanalyzes: tables.reduce((n, t) => n + delta(t, "autoanalyzes"), 0),
    jobs_autovacuums: delta("jobs", "autovacuums"),
    jobs_autoanalyzes: delta("jobs", "autoanalyzes"),
  };
}
