import { Card, CardHeader, EmptyState } from "@/components/ui/card";
import { HeldGpuCharts, type HeldSeries } from "./held-gpu-charts";
import { LogTail, type LogSource } from "./log-tail";

// What a tenant sees of its work on the nodes: its output and the GPUs it held. Plain props in,
// from lib/workload-logs and lib/metrics/held-gpu-telemetry; the log tail reads on by itself.

export function OutputCard({
  title,
  description,
  sources,
  labels,
  initial,
  emptyText,
}: {
  title: string;
  description: string;
  sources: LogSource[];
  labels: string[];
  initial: number;
  emptyText: string;
}) {
  return (
    <Card className="mt-6">
      <CardHeader title={title} description={description} />
      {sources.length === 0 ? (
        <EmptyState title="No output yet">{emptyText}</EmptyState>
      ) : (
        <LogTail sources={sources} labels={labels} initial={initial} emptyText={emptyText} />
      )}
    </Card>
  );
}

export function HeldGpusCard({
  title,
  window,
  series,
  emptyText,
}: {
  title: string;
  window: { from: string; to: string };
  series: HeldSeries[];
  emptyText: string;
}) {
  const span = `${fmt(window.from)} – ${fmt(window.to)} UTC`;
  return (
    <Card className="mt-6">
      <CardHeader title={title} description={`Only while it held them · ${span}`} />
      {series.every((s) => s.points.length === 0) ? (
        <EmptyState title="No GPU samples for this window">{emptyText}</EmptyState>
      ) : (
        <HeldGpuCharts series={series} />
      )}
    </Card>
  );
}

const fmt = (iso: string) => new Date(iso).toISOString().slice(0, 16).replace("T", " ");
