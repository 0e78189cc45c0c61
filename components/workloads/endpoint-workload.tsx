import type { EndpointJson } from "@/lib/endpoints/schemas";
import { HeldGpusCard, OutputCard } from "./workload-sections";

interface Telemetry {
  from: string;
  to: string;
  series: Array<{
    gpu_index: number | null;
    hostname: string | null;
    replica_id: string;
    points: Array<{ t: string; utilization_avg: number; memory_used_avg_mb: number; temperature_avg_c: number; power_avg_w: number }>;
  }>;
}

/** An endpoint's serving output, replica by replica, and the GPUs its replicas held in the last hour. */
export function EndpointWorkload({ endpoint, telemetry }: { endpoint: EndpointJson; telemetry: Telemetry }) {
  const replicas = endpoint.replica_list;
  return (
    <>
      <OutputCard
        title="Replica logs"
        description="The serving container's output, per replica"
        sources={replicas.map((r) => ({
          url: `/api/endpoints/${endpoint.id}/logs`,
          params: { replica_id: r.id },
          live: r.status !== "stopped",
        }))}
        labels={replicas.map((r) => `Replica ${r.id.slice(0, 8)} on ${r.hostname ?? "—"} (${r.status})`)}
        initial={0}
        emptyText="The serving container has printed nothing yet."
      />
      <HeldGpusCard
        title="GPUs the replicas held"
        window={telemetry}
        series={telemetry.series.map((s) => ({
          label: `GPU ${s.gpu_index ?? "?"} on ${s.hostname ?? "?"} · replica ${s.replica_id.slice(0, 8)}`,
          points: s.points,
        }))}
        emptyText="No replica held GPUs in this window, or their node has not reported yet."
      />
    </>
  );
}
