import "server-only";
import { pool } from "@/lib/db/client";

/** Deletes raw samples and rollups (GPU, cluster and endpoint) past their retention, in batches so no delete holds locks for long. */
export async function pruneMetrics(opts: { rawHours: number; rollupDays: number; batchSize?: number }) {
  const batch = opts.batchSize ?? 50_000;
  const drain = async (sql: string, arg: number) => {
    let total = 0;
    for (;;) {
      const { rowCount } = await pool().query(sql, [arg, batch]);
      total += rowCount ?? 0;
      if ((rowCount ?? 0) < batch) return total;
    }
  };
  const raw = await drain(
    `DELETE FROM gpu_metrics WHERE ctid = ANY(ARRAY(SELECT ctid FROM gpu_metrics WHERE recorded_at < now() - make_interval(hours => $1) LIMIT $2))`,
    opts.rawHours,
  );
  const rollups = await drain(
    `DELETE FROM gpu_metrics_1m WHERE ctid = ANY(ARRAY(SELECT ctid FROM gpu_metrics_1m WHERE bucket < now() - make_interval(days => $1) LIMIT $2))`,
    opts.rollupDays,
  );
  const clusters = await drain(
    `DELETE FROM cluster_metrics_1m WHERE ctid = ANY(ARRAY(SELECT ctid FROM cluster_metrics_1m WHERE bucket < now() - make_interval(days => $1) LIMIT $2))`,
    opts.rollupDays,
  );
  const endpointRaw = await drain(
    `DELETE FROM endpoint_metrics WHERE ctid = ANY(ARRAY(SELECT ctid FROM endpoint_metrics WHERE recorded_at < now() - make_interval(hours => $1) LIMIT $2))`,
    opts.rawHours,
  );
  const endpointRollups = await drain(
    `DELETE FROM endpoint_metrics_1m WHERE ctid = ANY(ARRAY(SELECT ctid FROM endpoint_metrics_1m WHERE bucket < now() - make_interval(days => $1) LIMIT $2))`,
    opts.rollupDays,
  );
  return { raw_deleted: raw, rollups_deleted: rollups, cluster_rollups_deleted: clusters, endpoint_raw_deleted: endpointRaw, endpoint_rollups_deleted: endpointRollups };
}
