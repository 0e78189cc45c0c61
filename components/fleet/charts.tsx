"use client";
import { AreaChart, BarChart, LineChart } from "@tremor/react";

// Tremor charts run in the browser; the pages pass plain, already-shaped data. Tremor's own
// legend renders list items inside buttons, which screen readers cannot follow (axe "list"):
// charts with several series get this legend instead.

const SWATCH: Record<string, string> = {
  indigo: "bg-indigo-500", emerald: "bg-emerald-500", amber: "bg-amber-500", rose: "bg-rose-500",
  sky: "bg-sky-500", violet: "bg-violet-500", lime: "bg-lime-500", fuchsia: "bg-fuchsia-500",
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

const time = (iso: string) => new Date(iso).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", timeZone: "UTC" });

export function FleetUtilizationChart({ points }: { points: Array<{ t: string; utilization: number }> }) {
  const data = points.map((p) => ({ time: time(p.t), "Utilization %": p.utilization }));
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
    />
  );
}

export function NodeGpuChart({ rows, metric }: { rows: Array<{ t: string; idx: number; util: number; temp: number }>; metric: "util" | "temp" }) {
  const byTime = new Map<string, Record<string, string | number>>();
  const gpus = new Set<number>();
  for (const r of rows) {
    const key = time(r.t);
    const point = byTime.get(key) ?? { time: key };
    point[`GPU ${r.idx}`] = Math.round(metric === "util" ? r.util : r.temp);
    byTime.set(key, point);
    gpus.add(r.idx);
  }
  const categories = [...gpus].sort((a, b) => a - b).map((i) => `GPU ${i}`);
  const colors = ["indigo", "emerald", "amber", "rose", "sky", "violet", "lime", "fuchsia"];
  return (
    <>
    <Legend items={categories} colors={colors} />
    <LineChart
      className="h-56"
      data={[...byTime.values()]}
      index="time"
      categories={categories}
      colors={colors}
      valueFormatter={(v) => (metric === "util" ? `${v} %` : `${v} °C`)}
      showAnimation={false}
      showLegend={false}
      yAxisWidth={48}
      {...(metric === "util" ? { minValue: 0, maxValue: 100 } : {})}
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
  return (
    <>
    <Legend items={types} colors={colors} />
    <BarChart
      className="h-64"
      data={[...byMonth.values()]}
      index="month"
      categories={types}
      colors={colors}
      stack
      valueFormatter={(v) => `$${v.toLocaleString("en-US", { maximumFractionDigits: 0 })}`}
      showAnimation={false}
      showLegend={false}
      yAxisWidth={72}
    />
    </>
  );
}

/** This month's cost by GPU type (dollars). */
export function UsageByTypeChart({ rows }: { rows: Array<{ gpu_type: string; amount_cents: number }> }) {
  return (
    <BarChart
      className="h-56"
      data={rows.map((r) => ({ type: r.gpu_type, Cost: r.amount_cents / 100 }))}
      index="type"
      categories={["Cost"]}
      colors={["indigo"]}
      valueFormatter={(v) => `$${v.toFixed(2)}`}
      showAnimation={false}
      showLegend={false}
      yAxisWidth={64}
    />
  );
}

/** Public-site page views and visitors per day. */
export function SiteViewsChart({ rows }: { rows: Array<{ day: string; views: number; sessions: number }> }) {
  return (
    <>
    <Legend items={["Views", "Visitors"]} colors={["indigo", "emerald"]} />
    <AreaChart
      className="h-56"
      data={rows.map((r) => ({ day: r.day, Views: r.views, Visitors: r.sessions }))}
      index="day"
      categories={["Views", "Visitors"]}
      colors={["indigo", "emerald"]}
      showAnimation={false}
      showLegend={false}
      yAxisWidth={48}
    />
    </>
  );
}

/** An endpoint's throughput per minute: requests/s and, where reported, tokens/s (thousands). */
export function EndpointTrafficChart({ points }: { points: Array<{ t: string; requests_per_s: number; tokens_per_s: number | null }> }) {
  const data = points.map((p) => ({ time: time(p.t), "Requests/s": p.requests_per_s, "Tokens/s (k)": p.tokens_per_s === null ? null : Math.round(p.tokens_per_s / 100) / 10 }));
  const categories = ["Requests/s", "Tokens/s (k)"];
  const colors = ["indigo", "emerald"];
  return (
    <>
    <Legend items={categories} colors={colors} />
    <AreaChart className="h-56" data={data} index="time" categories={categories} colors={colors} valueFormatter={(v) => v.toLocaleString("en-US", { maximumFractionDigits: 1 })} showAnimation={false} showLegend={false} yAxisWidth={48} connectNulls />
    </>
  );
}

/** Latency percentiles per minute against the SLA's p95 target, drawn as its own flat line. */
export function EndpointLatencyChart({ points, slaP95Ms }: { points: Array<{ t: string; p50_ms: number; p95_ms: number; p99_ms: number }>; slaP95Ms: number | null }) {
  const data = points.map((p) => ({ time: time(p.t), p50: p.p50_ms, p95: p.p95_ms, p99: p.p99_ms, ...(slaP95Ms ? { "SLA p95": slaP95Ms } : {}) }));
  const categories = ["p50", "p95", "p99", ...(slaP95Ms ? ["SLA p95"] : [])];
  const colors = ["sky", "indigo", "violet", "rose"];
  return (
    <>
    <Legend items={categories} colors={colors} />
    <LineChart className="h-56" data={data} index="time" categories={categories} colors={colors} valueFormatter={(v) => `${Math.round(v)} ms`} showAnimation={false} showLegend={false} yAxisWidth={64} />
    </>
  );
}
