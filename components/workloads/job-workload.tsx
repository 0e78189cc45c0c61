import Link from "next/link";
import { NodesByRack, TopologyLine } from "@/components/reservations/nodes-by-rack";
import { Card, CardHeader } from "@/components/ui/card";
import { topologySummary } from "@/lib/scheduler/topology";
import { HeldGpusCard, OutputCard } from "./workload-sections";

interface Placement {
  attempt: number;
  hostnames: string[];
  endedAt: Date | null;
  endStatus: string | null;
  reservationId: string | null;
  nodes: Array<{ node_id: string; hostname: string; clusterId: string; pod: string | null; rack: string | null }>;
}

interface Telemetry {
  from: string;
  to: string;
  series: Array<{
    gpu_index: number | null;
    hostname: string | null;
    attempt: number;
    points: Array<{ t: string; utilization_avg: number; memory_used_avg_mb: number; temperature_avg_c: number; power_avg_w: number }>;
  }>;
}

/**
 * Where a job's latest attempt ran (pods and racks, and its reservation), its output attempt by
 * attempt (live while it runs), and the GPUs each attempt held.
 */
export function JobWorkload({
  job,
  placements,
  telemetry,
  reservationsHref,
}: {
  job: { id: string; image: string | null; command: string | null; reservationId: string | null };
  placements: Placement[];
  telemetry: Telemetry;
  reservationsHref: string;
}) {
  const latest = placements[0];
  const reservationId = latest?.reservationId ?? job.reservationId;
  const reservationLink = reservationId ? (
    <Link className="text-sm text-indigo-700 hover:underline" href={`${reservationsHref}/${reservationId}`}>
      In reservation {reservationId.slice(0, 8)}
    </Link>
  ) : undefined;
  return (
    <>
      {latest ? (
        <Card className="mt-6">
          <CardHeader
            title="Topology"
            description={`Attempt ${latest.attempt}${latest.endedAt ? ` (${latest.endStatus})` : " (running)"}: a gang goes to one pod when it can, on the fewest racks.`}
            actions={reservationLink}
          />
          <div className="px-5 pt-4">
            <TopologyLine
              topology={topologySummary(latest.nodes.map((n) => ({ nodeId: n.node_id, clusterId: n.clusterId, pod: n.pod, rack: n.rack })))}
              located={latest.nodes.some((n) => n.pod !== null || n.rack !== null)}
            />
          </div>
          <NodesByRack nodes={latest.nodes} />
        </Card>
      ) : reservationLink ? (
        <p className="mt-6 text-sm text-slate-600">Runs only in {reservationLink}.</p>
      ) : null}
      <OutputCard
        title="Output"
        description="stdout and stderr of each attempt's container, as its node ships them"
        sources={placements.map((pl) => ({
          url: `/api/jobs/${job.id}/logs`,
          params: { attempt: String(pl.attempt) },
          live: pl.endedAt === null,
        }))}
        labels={placements.map(
          (pl) => `Attempt ${pl.attempt} on ${pl.hostnames.join(", ")}${pl.endedAt ? ` (${pl.endStatus})` : " (running)"}`,
        )}
        initial={0}
        emptyText={
          job.image || job.command
            ? "Nothing printed yet. Output appears here seconds after the container writes it."
            : "This job runs no image or command, so it prints nothing."
        }
      />
      <HeldGpusCard
        title="GPUs this job held"
        window={telemetry}
        series={telemetry.series.map((s) => ({
          label: `GPU ${s.gpu_index ?? "?"} on ${s.hostname ?? "?"} · attempt ${s.attempt}`,
          points: s.points,
        }))}
        emptyText={placements.length ? "The node has not reported samples for these GPUs yet." : "The job has not run yet."}
      />
    </>
  );
}
