"use client";
import { LineChart } from "@tremor/react";
import { formatOnAxis, niceAxis } from "@/lib/metrics/chart-axis";

// Utilization, memory, temperature and power of the GPUs a job or an endpoint held, drawn only for
// the time they held them (the API leaves the rest out). One line per GPU; the x axis is UTC time.

export interface HeldSeries {
  label: string;
  points: Array<{ t: string; utilization_avg: number; memory_used_avg_mb: number; temperature_avg_c: number; power_avg_w: number }>;
}

const COLORS = ["indigo", "emerald", "amber", "rose", "sky", "violet", "lime", "fuchsia"];
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

const METRICS = [
  { key: "utilization_avg", title: "Utilization", unit: "%", max: 100 },
  { key: "memory_used_avg_mb", title: "Memory used", unit: "GiB", scale: 1 / 1024 },
  { key: "temperature_avg_c", title: "Temperature", unit: "°C" },
  { key: "power_avg_w", title: "Power", unit: "W" },
] as const;

const time = (iso: string) =>
  new Date(iso).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit", timeZone: "UTC" });

export function HeldGpuCharts({ series }: { series: HeldSeries[] }) {
  const labels = series.map((s) => s.label);
  return (
    <div className="px-5 py-4">
      <ul className="mb-3 flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-600" aria-label="GPUs">
        {labels.map((l, i) => (
          <li key={l} className="flex items-center gap-1.5">
            <span aria-hidden className={`h-2 w-2 rounded-full ${SWATCH[COLORS[i % COLORS.length]!]}`} />
            {l}
          </li>
        ))}
      </ul>
      <div className="grid gap-6 lg:grid-cols-2">
        {METRICS.map((m) => {
          const byTime = new Map<string, Record<string, string | number>>();
          for (const [i, s] of series.entries()) {
            for (const p of s.points) {
              const row = byTime.get(p.t) ?? { t: p.t, time: time(p.t) };
              row[labels[i]!] = Math.round(p[m.key] * ("scale" in m ? m.scale : 1) * 10) / 10;
              byTime.set(p.t, row);
            }
          }
          const data = [...byTime.values()].sort((a, b) => String(a.t).localeCompare(String(b.t)));
          const top = data.reduce((mx, r) => labels.reduce((m2, l) => (typeof r[l] === "number" ? Math.max(m2, r[l]) : m2), mx), 0);
          const axis = "max" in m ? { max: m.max, step: 25, decimals: 0 } : niceAxis(top);
          return (
            <figure key={m.key}>
              <figcaption className="mb-1 text-xs font-medium text-slate-700">
                {m.title} ({m.unit}, UTC)
              </figcaption>
              <LineChart
                className="h-44"
                data={data}
                index="time"
                categories={labels}
                colors={COLORS}
                valueFormatter={(v) => `${formatOnAxis(v, axis, 1)} ${m.unit}`}
                showAnimation={false}
                showLegend={false}
                connectNulls={false}
                yAxisWidth={56}
                minValue={0}
                maxValue={axis.max}
              />
            </figure>
          );
        })}
      </div>
    </div>
  );
}
