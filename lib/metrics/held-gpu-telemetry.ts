import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { pool } from "@/lib/db/client";
import { columnSet } from "@/lib/db/column-set";
import { getEndpointOrThrow } from "@/lib/endpoints/get-endpoint";
import { env } from "@/lib/env";
import { validationFailed } from "@/lib/errors";
import { getJobOrThrow } from "@/lib/jobs/queries";
import { getPodOrThrow } from "@/lib/pods/queries";
import { chooseStep } from "./queries";

// GPU telemetry of a tenant's own work: the GPUs a job attempt or an endpoint replica held, only
// while it held them (a GPU's samples before and after belong to whoever held it then). Raw
// samples serve windows inside their retention; older windows use the per-minute rollups, and
// then only minutes wholly inside the holding, so no other tenant's minute is ever shown.

const MAX_POINTS = 5_000;
const MIN_STEP_S = 20;
/** The holdings' windows ($1-$3), numbered by position (n) to match the points back to them. */
const WINDOWS = columnSet({ gpu_id: "uuid[]", s: "timestamptz[]", e: "timestamptz[]" }, { alias: "w", ordinality: "n" });

interface SeriesOf {
  gpu_id: string;
  gpu_index: number | null;
  hostname: string | null;
  held_from: string;
  held_to: string;
  points: Array<{ t: string; utilization_avg: number; memory_used_avg_mb: number; temperature_avg_c: number; power_avg_w: number }>;
}

interface Holding<H> {
  gpuId: string;
  /** who held it: the job's attempt, or the endpoint's replica */
  holder: H;
  start: Date;
  end: Date;
}

export interface TelemetryWindow {
  from?: string;
  to?: string;
}

function window(q: TelemetryWindow, fallbackFrom: Date) {
  const to = q.to ? new Date(q.to) : new Date();
  const from = q.from ? new Date(q.from) : fallbackFrom;
  if (from >= to) throw validationFailed([{ path: "from", message: "Must be before to" }]);
  return { from, to };
}

/** Per-GPU series of the GPUs a job held, per attempt, for its tenant and operators. */
export async function jobGpuTelemetry(p: Principal, jobId: string, q: TelemetryWindow) {
  const job = await getJobOrThrow(p, jobId);
  const { from, to } = window(q, job.startedAt ?? job.submittedAt);
  const { rows } = await pool().query<{ attempt: number; gpu_ids: string[]; started_at: Date; ended_at: Date | null }>(
    `SELECT attempt, gpu_ids, started_at, ended_at FROM job_placements
      WHERE job_id = $1 AND started_at < $3 AND (ended_at IS NULL OR ended_at > $2) ORDER BY attempt`,
    [jobId, from, to],
  );
  const holdings = rows.flatMap((r) =>
    r.gpu_ids.map((gpuId) => ({ gpuId, holder: { attempt: r.attempt }, start: r.started_at, end: r.ended_at ?? new Date() })),
  );
  return series(holdings, from, to);
}

/** Per-GPU series of the GPUs an endpoint's replicas held, per replica, for its tenant and operators. */
export async function endpointGpuTelemetry(p: Principal, endpointId: string, q: TelemetryWindow) {
  const endpoint = await getEndpointOrThrow(p, endpointId);
  const { from, to } = window(q, new Date(Math.max(endpoint.createdAt.getTime(), Date.now() - 3_600_000)));
  const { rows } = await pool().query<{ id: string; gpu_ids: string[]; started_at: Date; stopped_at: Date | null }>(
    `SELECT id, gpu_ids, started_at, stopped_at FROM endpoint_replicas
      WHERE endpoint_id = $1 AND started_at < $3 AND (stopped_at IS NULL OR stopped_at > $2) ORDER BY started_at`,
    [endpointId, from, to],
  );
  const holdings = rows.flatMap((r) =>
    r.gpu_ids.map((gpuId) => ({ gpuId, holder: { replica_id: r.id }, start: r.started_at, end: r.stopped_at ?? new Date() })),
  );
  return series(holdings, from, to);
}

/** Per-GPU series of the GPUs a pod held, per placement, for its tenant and operators. */
export async function podGpuTelemetry(p: Principal, podId: string, q: TelemetryWindow) {
  const pod = await getPodOrThrow(p, podId);
  const { from, to } = window(q, new Date(Math.max(new Date(pod.created_at).getTime(), Date.now() - 3_600_000)));
  const { rows } = await pool().query<{ attempt: number; gpu_ids: string[]; started_at: Date; ended_at: Date | null }>(
    `SELECT attempt, gpu_ids, started_at, ended_at FROM pod_placements
      WHERE pod_id = $1 AND started_at < $3 AND (ended_at IS NULL OR ended_at > $2) ORDER BY attempt`,
    [podId, from, to],
  );
  const holdings = rows.flatMap((r) =>
    r.gpu_ids.map((gpuId) => ({ gpuId, holder: { attempt: r.attempt }, start: r.started_at, end: r.ended_at ?? new Date() })),
  );
  return series(holdings, from, to);
}

async function series<H extends object>(holdings: Array<Holding<H>>, from: Date, to: Date) {
  const rangeS = (to.getTime() - from.getTime()) / 1000;
  // nodes sample every 10 s or so, each at its own second: buckets of at least 20 s line their GPUs up
  const step = Math.max(MIN_STEP_S, chooseStep(rangeS));
  if (rangeS / step > MAX_POINTS)
    throw validationFailed([{ path: "from", message: `Would return more than ${MAX_POINTS} points per GPU` }]);
  const raw = from.getTime() >= Date.now() - env().METRICS_RAW_RETENTION_HOURS * 3_600_000;
  const clipped = holdings
    .map((h) => ({
      ...h,
      start: new Date(Math.max(h.start.getTime(), from.getTime())),
      end: new Date(Math.min(h.end.getTime(), to.getTime())),
    }))
    .filter((h) => h.start < h.end);
  const base = { from: from.toISOString(), to: to.toISOString(), step_s: step, source: raw ? ("raw" as const) : ("rollup" as const) };
  if (clipped.length === 0) return { ...base, series: [] as Array<H & SeriesOf> };
  const windows = WINDOWS.bindRows(clipped, { gpu_id: (h) => h.gpuId, s: (h) => h.start.toISOString(), e: (h) => h.end.toISOString() });
  const sql = raw
    ? `SELECT w.n, date_bin(make_interval(secs => $4), m.recorded_at, $5::timestamptz) AS t, avg(m.utilization_pct) AS ua, avg(m.memory_used_mb) AS ma,
              avg(m.temperature_c) AS ta, avg(m.power_draw_w) AS pa
         FROM ${windows.sql}
         JOIN gpu_metrics m ON m.gpu_id = w.gpu_id AND m.recorded_at >= w.s AND m.recorded_at < w.e
        GROUP BY 1, 2 ORDER BY 1, 2`
    : `SELECT w.n, date_bin(make_interval(secs => $4), m.bucket, $5::timestamptz) AS t, sum(m.utilization_sum) / sum(m.samples) AS ua,
              sum(m.memory_used_sum) / sum(m.samples) AS ma, sum(m.temperature_sum) / sum(m.samples) AS ta, sum(m.power_sum) / sum(m.samples) AS pa
         FROM ${windows.sql}
         JOIN gpu_metrics_1m m ON m.gpu_id = w.gpu_id AND m.bucket >= w.s AND m.bucket + interval '1 minute' <= w.e
        GROUP BY 1, 2 ORDER BY 1, 2`;
  const [{ rows }, { rows: gpus }] = await Promise.all([
    pool().query<{ n: string; t: Date; ua: number; ma: number; ta: number; pa: number }>(sql, [
      ...windows.values,
      step,
      from.toISOString(),
    ]),
    pool().query<{ id: string; index: number; hostname: string }>(
      `SELECT g.id, g.index, n.hostname FROM gpus g JOIN nodes n ON n.id = g.node_id WHERE g.id = ANY($1::uuid[])`,
      [[...new Set(clipped.map((h) => h.gpuId))]],
    ),
  ]);
  const gpuInfo = new Map(gpus.map((g) => [g.id, g]));
  const r1 = (v: unknown) => Math.round(Number(v) * 10) / 10;
  const points = new Map<
    number,
    Array<{ t: string; utilization_avg: number; memory_used_avg_mb: number; temperature_avg_c: number; power_avg_w: number }>
  >();
  for (const r of rows) {
    const n = Number(r.n);
    if (!points.has(n)) points.set(n, []);
    points.get(n)!.push({
      t: new Date(r.t).toISOString(),
      utilization_avg: r1(r.ua),
      memory_used_avg_mb: Math.round(Number(r.ma)),
      temperature_avg_c: r1(r.ta),
      power_avg_w: r1(r.pa),
    });
  }
  return {
    ...base,
    series: clipped.map((h, i): H & SeriesOf => ({
      gpu_id: h.gpuId,
      gpu_index: gpuInfo.get(h.gpuId)?.index ?? null,
      hostname: gpuInfo.get(h.gpuId)?.hostname ?? null,
      ...h.holder,
      held_from: h.start.toISOString(),
      held_to: h.end.toISOString(),
      points: points.get(i + 1) ?? [],
    })),
  };
}
