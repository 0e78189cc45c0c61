import { HeldGpusCard, OutputCard } from "./workload-sections";

interface Placement {
  attempt: number;
  hostnames: string[];
  endedAt: Date | null;
  endStatus: string | null;
}

interface Telemetry {
  from: string;
  to: string;
  series: Array<{ gpu_index: number | null; hostname: string | null; attempt: number; points: Array<{ t: string; utilization_avg: number; memory_used_avg_mb: number; temperature_avg_c: number; power_avg_w: number }> }>;
}

/** A job's output, attempt by attempt (live while it runs), and the GPUs each attempt held. */
export function JobWorkload({ job, placements, telemetry }: { job: { id: string; image: string | null; command: string | null }; placements: Placement[]; telemetry: Telemetry }) {
  return (
    <>
      <OutputCard
        title="Output"
        description="stdout and stderr of each attempt's container, as its node ships them"
        sources={placements.map((pl) => ({ url: `/api/jobs/${job.id}/logs`, params: { attempt: String(pl.attempt) }, live: pl.endedAt === null }))}
        labels={placements.map((pl) => `Attempt ${pl.attempt} on ${pl.hostnames.join(", ")}${pl.endedAt ? ` (${pl.endStatus})` : " (running)"}`)}
        initial={0}
        emptyText={job.image || job.command ? "Nothing printed yet. Output appears here seconds after the container writes it." : "This job runs no image or command, so it prints nothing."}
      />
      <HeldGpusCard
        title="GPUs this job held"
        window={telemetry}
        series={telemetry.series.map((s) => ({ label: `GPU ${s.gpu_index ?? "?"} on ${s.hostname ?? "?"} · attempt ${s.attempt}`, points: s.points }))}
        emptyText={placements.length ? "The node has not reported samples for these GPUs yet." : "The job has not run yet."}
      />
    </>
  );
}
