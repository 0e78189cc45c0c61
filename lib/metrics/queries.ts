import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { pool } from "@/lib/db/client";
import { validationFailed } from "@/lib/errors";
import { getGpuOrThrow } from "@/lib/fleet/queries";
import { bucketGrid, fillGaps, type TimeRange } from "./time-range";

const MAX_POINTS = 5_000;

export interface SeriesOptions {
  from?: string;
  to?: string;
  step?: number;
}

/** Picks a step that keeps a chart readable (~300 points) when the caller gives none. */
export function chooseStep(rangeS: number, requested?: number): number {
  if (requested) return requested;
  const raw = Math.ceil(rangeS / 300);
  if (raw < 60) return Math.max(1, raw);
  return Math.ceil(raw / 60) * 60;
}

/**
 * A GPU's series between from and to (default: the last hour). Steps under a minute aggregate raw
 * samples; steps of a minute or more aggregate the per-minute rollups, which outlive raw samples.
 */
export async function gpuMetricSeries(principal: Principal, gpuId: string, opts: SeriesOptions) {
  await getGpuOrThrow(principal, gpuId);
  const to = opts.to ? new Date(opts.to) : new Date();
  const from = opts.from ? new Date(opts.from) : new Date(to.getTime() - 3_600_000);
  if (from >= to) throw validationFailed([{ path: "from", message: "Must be before to" }]);
  const rangeS = (to.getTime() - from.getTime()) / 1000;
  const step = chooseStep(rangeS, opts.step);
  if (rangeS / step > MAX_POINTS) {
    throw validationFailed([
      { path: "step", message: `Would return more than ${MAX_POINTS} points; use a step of at least ${Math.ceil(rangeS / MAX_POINTS)} s` },
    ]);
  }
  const source = step >= 60 ? "rollup" : "raw";
  const sql =
    source === "raw"
      ? `SELECT date_bin(make_interval(secs => $4), recorded_at, $2::timestamptz) AS t, count(*)::int AS samples,
                avg(utilization_pct) AS ua, max(utilization_pct) AS um, avg(memory_used_mb) AS ma, max(memory_used_mb) AS mm,
                avg(temperature_c) AS ta, max(temperature_c) AS tm, avg(power_draw_w) AS pa, max(power_draw_w) AS pm
           FROM gpu_metrics WHERE gpu_id = $1 AND recorded_at >= $2 AND recorded_at < $3 GROUP BY 1 ORDER BY 1`
      : `SELECT date_bin(make_interval(secs => $4), bucket, $2::timestamptz) AS t, sum(samples)::int AS samples,
                sum(utilization_sum) / sum(samples) AS ua, max(utilization_max) AS um, sum(memory_used_sum) / sum(samples) AS ma,
                max(memory_used_max) AS mm, sum(temperature_sum) / sum(samples) AS ta, max(temperature_max) AS tm,
                sum(power_sum) / sum(samples) AS pa, max(power_max) AS pm
           FROM gpu_metrics_1m WHERE gpu_id = $1 AND bucket >= $2 AND bucket < $3 GROUP BY 1 ORDER BY 1`;
  const { rows } = await pool().query(sql, [gpuId, from.toISOString(), to.toISOString(), step]);
  const r1 = (v: unknown) => Math.round(Number(v) * 10) / 10;
  return {
    gpu_id: gpuId,
    from: from.toISOString(),
    to: to.toISOString(),
    step_s: step,
    source: source as "raw" | "rollup",
    points: rows.map((r) => ({
      t: new Date(r.t).toISOString(),
      samples: r.samples,
      utilization_avg: r1(r.ua),
      utilization_max: r1(r.um),
      memory_used_avg_mb: Math.round(Number(r.ma)),
      memory_used_max_mb: Number(r.mm),
      temperature_avg_c: r1(r.ta),
      temperature_max_c: r1(r.tm),
      power_avg_w: r1(r.pa),
      power_max_w: r1(r.pm),
    })),
  };
}

/** Fleet (or one cluster's) average utilization per step of the range, from the cluster rollups; every bucket of the range is present (null: no data). */
export async function fleetUtilizationSeries(range: Pick<TimeRange, "from" | "to" | "stepS">, clusterId?: string) {
  const { rows } = await pool().query<{ t: Date; util: number; temp: number }>(
    `SELECT date_bin(make_interval(secs => $3), bucket, 'epoch'::timestamptz) AS t,
            sum(utilization_sum) / sum(samples) AS util, max(temperature_max) AS temp
       FROM cluster_metrics_1m
      WHERE bucket >= date_bin(make_interval(secs => $3), $1::timestamptz, 'epoch'::timestamptz) AND bucket < $2 AND ($4::uuid IS NULL OR cluster_id = $4::uuid)
      GROUP BY 1 ORDER BY 1`,
    [range.from, range.to, range.stepS, clusterId ?? null],
  );
  const points = rows.map((r) => ({
    t: new Date(r.t).getTime(),
    utilization: Math.round(Number(r.util) * 10) / 10,
    temperature_max: Number(r.temp),
  }));
  return {
    points: fillGaps(bucketGrid(range.from, range.to, range.stepS), points, ["utilization", "temperature_max"] as const),
    hasData: points.length > 0,
  };
}

/** Per-GPU utilization and temperature of one node per step of the range, for the node page's charts. */
export async function nodeGpuSeries(nodeId: string, range: Pick<TimeRange, "from" | "to" | "stepS">) {
  const { rows } = await pool().query<{ t: Date; idx: number; util: number; temp: number }>(
    `SELECT date_bin(make_interval(secs => $4), m.bucket, 'epoch'::timestamptz) AS t, g.index AS idx,
            sum(m.utilization_sum) / sum(m.samples) AS util, sum(m.temperature_sum) / sum(m.samples) AS temp
       FROM gpu_metrics_1m m JOIN gpus g ON g.id = m.gpu_id
      WHERE g.node_id = $1 AND m.bucket >= date_bin(make_interval(secs => $4), $2::timestamptz, 'epoch'::timestamptz) AND m.bucket < $3
      GROUP BY 1, 2 ORDER BY 1, 2`,
    [nodeId, range.from, range.to, range.stepS],
  );
  return rows.map((r) => ({ t: new Date(r.t).getTime(), idx: r.idx, util: Number(r.util), temp: Number(r.temp) }));
}
