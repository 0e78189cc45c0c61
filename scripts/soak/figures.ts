// The soak's measured figures: CPU and memory of each process it runs (from /proc, summed over a
// process's descendants and across its restarts), the database's size over time, and the
// latencies that matter during chaos, read from the database at the end.
import type pg from "pg";
import { descendsFrom, readProcesses, readPssBytes } from "../lib/proc-stats";
import { percentile, round } from "../lib/stats";
import type { ChaosEvent } from "./chaos";

export interface ProcessFigures {
  name: string;
  cpu_s: number;
  cpu_pct_of_one_core: number;
  /** proportional set size: shared pages split among the processes sharing them */
  memory_mb_max: number;
  memory_mb_last: number;
  restarts: number;
  unexpected_exits: number;
}

/**
 * Samples the named processes every `everyMs`. A process's CPU is what its tree used while it ran,
 * summed over its lives (a killed app's last few seconds before the kill are not seen).
 */
export function sampleProcesses(
  targets: () => Array<{ name: string; pid: number | undefined; tree: boolean; restarts?: number; unexpectedExits?: number }>,
  everyMs = 5_000,
) {
  const startedAt = Date.now();
  const cpuByRoot = new Map<string, Map<number, number>>();
  const rss = new Map<string, { max: number; last: number }>();
  const restarts = new Map<string, { restarts: number; unexpected: number }>();
  const sample = () => {
    const procs = readProcesses();
    if (!procs) return;
    for (const t of targets()) {
      restarts.set(t.name, { restarts: t.restarts ?? 0, unexpected: t.unexpectedExits ?? 0 });
      if (t.pid === undefined || !procs.has(t.pid)) continue;
      const members = t.tree ? [...procs.values()].filter((p) => descendsFrom(procs, p.pid, t.pid!)) : [procs.get(t.pid)!];
      const cpu = members.reduce((n, p) => n + p.cpuSeconds, 0);
      const bytes = members.reduce((n, p) => n + (readPssBytes(p.pid) ?? p.rssBytes), 0);
      const roots = cpuByRoot.get(t.name) ?? new Map<number, number>();
      roots.set(t.pid, cpu);
      cpuByRoot.set(t.name, roots);
      const r = rss.get(t.name) ?? { max: 0, last: 0 };
      rss.set(t.name, { max: Math.max(r.max, bytes), last: bytes });
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop(): ProcessFigures[] {
      sample();
      clearInterval(timer);
      const wallS = (Date.now() - startedAt) / 1000;
      return [...cpuByRoot.entries()].map(([name, roots]) => {
        const cpu = [...roots.values()].reduce((n, x) => n + x, 0);
        const r = rss.get(name)!;
        const r2 = restarts.get(name);
        return {
          name,
          cpu_s: round(cpu),
          cpu_pct_of_one_core: round((100 * cpu) / wallS),
          memory_mb_max: round(r.max / 2 ** 20),
          memory_mb_last: round(r.last / 2 ** 20),
          restarts: r2?.restarts ?? 0,
          unexpected_exits: r2?.unexpected ?? 0,
        };
      });
    },
  };
}

export async function databaseSize(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ bytes: string }>("SELECT pg_database_size(current_database()) AS bytes");
  return Number(rows[0]!.bytes);
}

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)) };
};

/**
 * Submit → running for jobs submitted during chaos that waited for capacity only (never blocked by
 * their tenant's quota, nor named into a reservation, which they wait to start), and fault → quarantine for each fatal XID the chaos injected (pushed by the
 * agent at once) and each overheating.
 */
export async function chaosLatencies(pool: pg.Pool, from: number, to: number, events: ChaosEvent[]) {
  const { rows: submits } = await pool.query<{ ms: number | null }>(
    `SELECT (extract(epoch FROM p.started_at - j.submitted_at) * 1000)::float8 AS ms
       FROM jobs j LEFT JOIN job_placements p ON p.job_id = j.id AND p.attempt = 1
      WHERE j.submitted_at BETWEEN $1 AND $2 AND j.reservation_id IS NULL
        AND NOT EXISTS (SELECT 1 FROM job_events e WHERE e.job_id = j.id AND e.to_status = 'blocked')`,
    [new Date(from), new Date(to)],
  );
  const faults = events.filter((e) => (e.kind === "xid_fatal" || e.kind === "overheat") && e.node_id);
  const { rows: remediations } = await pool.query<{ node_id: string; outcome: string; at: Date }>(
    `SELECT node_id, outcome, created_at AS at FROM remediations ORDER BY created_at`,
  );
  const outcome = (e: ChaosEvent) => remediations.find((r) => r.node_id === e.node_id && r.at.getTime() >= e.at - 1_000);
  const of = (kind: ChaosEvent["kind"]) => {
    const list = faults.filter((e) => e.kind === kind).map((e) => ({ e, r: outcome(e) }));
    const quarantined = list.filter((x) => x.r?.outcome === "quarantined");
    return {
      ...summary(quarantined.map((x) => x.r!.at.getTime() - x.e.at)),
      faults: list.length,
      quarantined: quarantined.length,
      capped: list.filter((x) => x.r?.outcome === "capped").length,
      not_remediated: list.filter((x) => !x.r).length,
    };
  };
  const placed = submits.filter((r) => r.ms !== null).map((r) => Math.max(0, r.ms!));
  return {
    submit_to_running_ms: { ...summary(placed), not_placed: submits.length - placed.length },
    fault_to_quarantine_ms: of("xid_fatal"),
    overheat_to_quarantine_ms: of("overheat"),
  };
}

/**
 * Handovers begun during chaos (by reservations' ends and by the operator): how they ended, by
 * trigger, and how long the ones that passed took from release to back in service; verdicts by
 * result with their failures' ids; and how many of the implanted nodes failed attestation.
 */
export async function handoverFigures(pool: pg.Pool, from: number, to: number, implantedNodeIds: string[]) {
  const { rows } = await pool.query<{ trigger: string; status: string; ms: number | null }>(
    `SELECT trigger, status, (extract(epoch FROM finished_at - started_at) * 1000)::float8 AS ms
       FROM node_workflows WHERE kind = 'handover' AND started_at BETWEEN $1 AND $2`,
    [new Date(from), new Date(to)],
  );
  const { rows: verdicts } = await pool.query<{ result: string; n: number }>(
    `SELECT result, count(*)::int AS n FROM attestations GROUP BY 1`,
  );
  // each failure id with the number of verdicts that name it
  const { rows: failures } = await pool.query<{ code: string; n: number }>(
    `SELECT f->>'code' AS code, count(DISTINCT a.id)::int AS n
       FROM attestations a CROSS JOIN LATERAL jsonb_array_elements(a.failures) f GROUP BY 1 ORDER BY 2 DESC`,
  );
  const { rows: caught } = await pool.query<{ n: number }>(
    `SELECT count(DISTINCT node_id)::int AS n FROM attestations WHERE result = 'fail' AND node_id = ANY($1::uuid[])`,
    [implantedNodeIds],
  );
  const count = (pred: (r: (typeof rows)[number]) => boolean) => rows.filter(pred).length;
  return {
    started: rows.length,
    by_trigger: Object.fromEntries([...new Set(rows.map((r) => r.trigger))].map((t) => [t, count((r) => r.trigger === t)])),
    succeeded: count((r) => r.status === "succeeded"),
    failed: count((r) => r.status === "failed"),
    cancelled: count((r) => r.status === "cancelled"),
    still_running: count((r) => r.status === "running"),
    passed_duration_ms: summary(rows.filter((r) => r.status === "succeeded" && r.ms !== null).map((r) => r.ms!)),
    verdicts: {
      pass: verdicts.find((v) => v.result === "pass")?.n ?? 0,
      fail: verdicts.find((v) => v.result === "fail")?.n ?? 0,
      failures: Object.fromEntries(failures.map((f) => [f.code, f.n])),
    },
    implanted_nodes: new Set(implantedNodeIds).size,
    implanted_nodes_failing_attestation: caught[0]!.n,
  };
}
