"use client";
import { AreaChart, BarChart, LineChart } from "@tremor/react";
import { countAxis, formatDollarsOnAxis, formatOnAxis, moneyAxis, niceAxis, type ValueAxis } from "@/lib/metrics/chart-axis";
import { formatAxisTime } from "@/lib/metrics/time-range";

// Tremor charts run in the browser; the pages pass plain, already-shaped data. Tremor's own
// legend renders list items inside buttons, which screen readers cannot follow (axe "list"):
// charts with several series get this legend instead.

const SWATCH: Record<string, string> = {
  indigo: "bg-indigo-500",
  emerald: "bg-emerald-500",
  amber: "bg-amber-500",
  rose: "bg-rose-500",
  sky: "bg-sky-500",
  violet: "bg-violet-500",
  lime: "bg-lime-500",
  fuchsia: "bg-fuchsia-500",
};

function Legend({ items, colors }: { items: string[]; colors: string[] }) {
  return (
    <ul className="mb-3 flex flex-wrap justify-end gap-x-4 gap-y-1 text-xs text-slate-600" aria-label="Legend">
      {items.map((item, i) => (
        <li key={item} className="flex items-center gap-1.5">
          <span aria-hidden className={`h-2 w-2 rounded-full ${SWATCH[colors[i % colors.length]!] ?? "bg-slate-400"}`} />
          {item}
        </li>
      ))}
    </ul>
  );
}

/** Axis labels in UTC: the time of day, with the date once a chart spans a day or more. */
const label = (t: string | number, spanMs: number) => formatAxisTime(typeof t === "number" ? t : Date.parse(t), spanMs);
const ms = (t: string | number) => (typeof t === "number" ? t : Date.parse(t));
const spanOf = (points: Array<{ t: string | number }>) => (points.length < 2 ? 0 : ms(points.at(-1)!.t) - ms(points[0]!.t));

/** The largest value of some series over the rows (0 when there is none). */
const maxOf = (rows: Array<Record<string, unknown>>, keys: readonly string[]) =>
  rows.reduce((m, r) => keys.reduce((mm, k) => (typeof r[k] === "number" ? Math.max(mm, r[k]) : mm), m), 0);

/** A value axis from 0 to four nice steps over the data, every tick labelled differently (lib/metrics/chart-axis.ts). */
const axisProps = (axis: ValueAxis, format: (v: number) => string) => ({
  minValue: 0,
  maxValue: axis.max,
  valueFormatter: format,
});

// Every time chart below plots one row per step of its range, nulls included: the axis is real
// time (evenly spaced steps) and a gap in the data shows as a gap in the line, never as two
// distant points drawn side by side.

export function FleetUtilizationChart({ points }: { points: Array<{ t: number; utilization: number | null }> }) {
  const span = spanOf(points);
  const data = points.map((p) => ({ time: label(p.t, span), "Utilization %": p.utilization }));
  return (
    <AreaChart
      className="h-64"
      data={data}
      index="time"
      categories={["Utilization %"]}
      colors={["indigo"]}
      minValue={0}
      maxValue={100}
      valueFormatter={(v) => `${v.toFixed(0)} %`}
      showAnimation={false}
      showLegend={false}
      yAxisWidth={48}
      connectNulls={false}
    />
  );
}

export function NodeGpuChart({
  grid,
  rows,
  metric,
}: {
  grid: number[];
  rows: Array<{ t: number; idx: number; util: number; temp: number }>;
  metric: "util" | "temp";
}) {
  const span = grid.length > 1 ? grid.at(-1)! - grid[0]! : 0;
  const gpus = [...new Set(rows.map((r) => r.idx))].sort((a, b) => a - b);
  const byTime = new Map<number, Record<string, string | number | null>>(
    grid.map((t) => [t, { time: label(t, span), ...Object.fromEntries(gpus.map((i) => [`GPU ${i}`, null])) }]),
  );
  for (const r of rows) {
    const point = byTime.get(r.t);
    if (point) point[`GPU ${r.idx}`] = Math.round(metric === "util" ? r.util : r.temp);
  }
  const categories = gpus.map((i) => `GPU ${i}`);
  const colors = ["indigo", "emerald", "amber", "rose", "sky", "violet", "lime", "fuchsia"];
  const data = [...byTime.values()];
  const axis = metric === "util" ? { max: 100, step: 25, decimals: 0 } : niceAxis(maxOf(data, categories));
  return (
    <>
      <Legend items={categories} colors={colors} />
      <LineChart
        className="h-56"
        data={data}
        index="time"
        categories={categories}
        colors={colors}
        showAnimation={false}
        showLegend={false}
        yAxisWidth={48}
        connectNulls={false}
        {...axisProps(axis, (v) => `${formatOnAxis(v, axis, 0)} ${metric === "util" ? "%" : "°C"}`)}
      />
    </>
  );
}

/** Billed amounts per month, stacked by GPU type (dollars). */
export function RevenueByMonthChart({ rows }: { rows: Array<{ month: string; gpu_type: string; cents: number }> }) {
  const types = [...new Set(rows.map((r) => r.gpu_type))].sort();
  const byMonth = new Map<string, Record<string, string | number>>();
  for (const r of rows) {
    const point = byMonth.get(r.month) ?? { month: r.month };
    point[r.gpu_type] = Math.round(r.cents) / 100;
    byMonth.set(r.month, point);
  }
  const colors = ["indigo", "sky", "emerald", "amber", "rose", "violet"];
  const data = [...byMonth.values()];
  // stacked: the axis holds each month's total
  const axis = moneyAxis(Math.max(0, ...data.map((m) => types.reduce((s, t) => s + (typeof m[t] === "number" ? m[t] : 0), 0))));
  return (
    <>
      <Legend items={types} colors={colors} />
      <BarChart
        className="h-64"
        data={data}
        index="month"
        categories={types}
        colors={colors}
        stack
        showAnimation={false}
        showLegend={false}
        yAxisWidth={72}
        {...axisProps(axis, (v) => formatDollarsOnAxis(v, axis))}
      />
    </>
  );
}

/** This month's cost by GPU type (dollars). */
export function UsageByTypeChart({ rows }: { rows: Array<{ gpu_type: string; amount_cents: number }> }) {
  const data = rows.map((r) => ({ type: r.gpu_type, Cost: r.amount_cents / 100 }));
  const axis = moneyAxis(maxOf(data, ["Cost"]));
  return (
    <BarChart
      className="h-56"
      data={data}
      index="type"
      categories={["Cost"]}
      colors={["indigo"]}
      showAnimation={false}
      showLegend={false}
      yAxisWidth={64}
      {...axisProps(axis, (v) => formatDollarsOnAxis(v, axis))}
    />
  );
}

/** Public-site page views and visitors per step of the page's range (zero where nobody came). */
export function SiteViewsChart({ rows }: { rows: Array<{ t: number; views: number; sessions: number }> }) {
  const span = spanOf(rows);
  const data = rows.map((r) => ({ time: label(r.t, span), Views: r.views, Visitors: r.sessions }));
  const axis = countAxis(maxOf(data, ["Views", "Visitors"]));
  return (
    <>
      <Legend items={["Views", "Visitors"]} colors={["indigo", "emerald"]} />
      <AreaChart
        className="h-56"
        data={data}
        index="time"
        categories={["Views", "Visitors"]}
        colors={["indigo", "emerald"]}
        showAnimation={false}
        showLegend={false}
        yAxisWidth={48}
        {...axisProps(axis, (v) => formatOnAxis(v, axis, 0))}
      />
    </>
  );
}

/** An endpoint's requests per second, per step: one unit on the axis (tokens have their own chart). */
export function EndpointTrafficChart({ points }: { points: Array<{ t: string; requests_per_s: number | null }> }) {
  const span = spanOf(points);
  const data = points.map((p) => ({ time: label(p.t, span), "Requests/s": p.requests_per_s }));
  const axis = niceAxis(maxOf(data, ["Requests/s"]));
  return (
    <AreaChart
      className="h-56"
      data={data}
      index="time"
      categories={["Requests/s"]}
      colors={["indigo"]}
      showAnimation={false}
      showLegend={false}
      yAxisWidth={76}
      connectNulls={false}
      {...axisProps(axis, (v) => `${formatOnAxis(v, axis, 1)} req/s`)}
    />
  );
}

/** Tokens per second, per step, where the serving side reports them: its own chart and its own unit. */
export function EndpointTokensChart({ points }: { points: Array<{ t: string; tokens_per_s: number | null }> }) {
  const span = spanOf(points);
  const data = points.map((p) => ({ time: label(p.t, span), "Tokens/s": p.tokens_per_s }));
  const axis = niceAxis(maxOf(data, ["Tokens/s"]));
  return (
    <AreaChart
      className="h-40"
      data={data}
      index="time"
      categories={["Tokens/s"]}
      colors={["emerald"]}
      showAnimation={false}
      showLegend={false}
      yAxisWidth={92}
      connectNulls={false}
      {...axisProps(axis, (v) => `${formatOnAxis(v, axis, 0)} tok/s`)}
    />
  );
}

/** Latency percentiles per step against the SLA's p95 target, drawn as its own flat line. */
export function EndpointLatencyChart({
  points,
  slaP95Ms,
}: {
  points: Array<{ t: string; p50_ms: number | null; p95_ms: number | null; p99_ms: number | null }>;
  slaP95Ms: number | null;
}) {
  const span = spanOf(points);
  const data = points.map((p) => ({
    time: label(p.t, span),
    p50: p.p50_ms,
    p95: p.p95_ms,
    p99: p.p99_ms,
    ...(slaP95Ms ? { "SLA p95": slaP95Ms } : {}),
  }));
  const categories = ["p50", "p95", "p99", ...(slaP95Ms ? ["SLA p95"] : [])];
  const colors = ["sky", "indigo", "violet", "rose"];
  const axis = niceAxis(maxOf(data, categories), 1);
  return (
    <>
      <Legend items={categories} colors={colors} />
      <LineChart
        className="h-56"
        data={data}
        index="time"
        categories={categories}
        colors={colors}
        showAnimation={false}
        showLegend={false}
        yAxisWidth={80}
        connectNulls={false}
        {...axisProps(axis, (v) => `${formatOnAxis(v, axis, 0)} ms`)}
      />
    </>
  );
}
