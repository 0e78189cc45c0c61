// A stand-in for an app process that ingests and folds until it is killed (tests/integration/
// rollup-fold.test.ts kills it with SIGKILL at an arbitrary moment). Reads the cluster and the
// GPUs' UUIDs from argv; prints one line per round it finished.
import { foldGpuRollups } from "@/lib/metrics/fold-rollups";
import { ingestGpuMetrics } from "@/lib/metrics/ingest-gpu-metrics";

const [clusterId, uuidList, startMs] = process.argv.slice(2);
const uuids = uuidList!.split(",");
const agent = { kind: "agent" as const, clusterId: clusterId!, keyId: "00000000-0000-4000-8000-00000000a9e7", label: "fold child" };
for (let round = 0; ; round++) {
  const at = new Date(Number(startMs) + round * 1000).toISOString();
  // two reports and a fold at once, as a busy process would have them
  await Promise.all([
    ingestGpuMetrics(
      agent,
      uuids.map((u, i) => ({
        gpu_uuid: u,
        recorded_at: at,
        utilization_pct: (round + i) % 100,
        memory_used_mb: round,
        temperature_c: 40,
        power_draw_w: 100 + i,
      })),
    ),
    ingestGpuMetrics(
      agent,
      uuids.map((u, i) => ({
        gpu_uuid: u,
        recorded_at: new Date(Number(startMs) + round * 1000 + 500).toISOString(),
        utilization_pct: i,
        memory_used_mb: 1,
        temperature_c: 41,
        power_draw_w: 100,
      })),
    ),
    foldGpuRollups({ rowsPerPass: 1 }),
  ]);
  process.stdout.write(`${round}\n`);
}
