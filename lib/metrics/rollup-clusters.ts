import "server-only";
import { pool } from "@/lib/db/client";

/**
 * Folds the last few minutes of per-GPU rollups into per-cluster rollups. Recomputing a recent
 * window (not incrementing) makes the job idempotent and catches late samples.
 */
export async function rollupClusterMetrics(windowMinutes = 10): Promise<{ rows: number }> {
  const { rowCount } = await pool().query(
    `INSERT INTO cluster_metrics_1m AS c (cluster_id, bucket, gpus_reporting, samples, utilization_sum, temperature_max, power_sum)
     SELECT n.cluster_id, m.bucket, count(DISTINCT m.gpu_id), sum(m.samples), sum(m.utilization_sum), max(m.temperature_max), sum(m.power_sum)
       FROM gpu_metrics_1m m JOIN gpus g ON g.id = m.gpu_id JOIN nodes n ON n.id = g.node_id
      WHERE m.bucket >= date_trunc('minute', now()) - make_interval(mins => $1)
      GROUP BY 1, 2
     ON CONFLICT (cluster_id, bucket) DO UPDATE SET gpus_reporting = EXCLUDED.gpus_reporting, samples = EXCLUDED.samples,
       utilization_sum = EXCLUDED.utilization_sum, temperature_max = EXCLUDED.temperature_max, power_sum = EXCLUDED.power_sum`,
    [windowMinutes],
  );
  return { rows: rowCount ?? 0 };
}
