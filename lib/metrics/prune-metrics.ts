import "server-only";
import { pool } from "@/lib/db/client";

// What each retention applies to: raw samples by hours, per-minute rollups by days.
const TABLES = [
  { key: "raw_deleted", table: "gpu_metrics", column: "recorded_at", unit: "hours" },
  { key: "rollups_deleted", table: "gpu_metrics_1m", column: "bucket", unit: "days" },
  { key: "cluster_rollups_deleted", table: "cluster_metrics_1m", column: "bucket", unit: "days" },
  { key: "endpoint_raw_deleted", table: "endpoint_metrics", column: "recorded_at", unit: "hours" },
  { key: "endpoint_rollups_deleted", table: "endpoint_metrics_1m", column: "bucket", unit: "days" },
  { key: "endpoint_observations_deleted", table: "endpoint_observations_1m", column: "bucket", unit: "days" },
] as const;

type PruneResult = Record<(typeof TABLES)[number]["key"], number>;

/** Deletes raw samples and rollups (GPU, cluster and endpoint) past their retention, in batches so no delete holds locks for long. */
export async function pruneMetrics(opts: { rawHours: number; rollupDays: number; batchSize?: number }): Promise<PruneResult> {
  const batch = opts.batchSize ?? 50_000;
  const result = {} as PruneResult;
  for (const t of TABLES) {
    const sql = `DELETE FROM ${t.table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${t.table} WHERE ${t.column} < now() - make_interval(${t.unit} => $1) LIMIT $2))`;
    const age = t.unit === "hours" ? opts.rawHours : opts.rollupDays;
    let total = 0;
    for (;;) {
      const { rowCount } = await pool().query(sql, [age, batch]);
      total += rowCount ?? 0;
      if ((rowCount ?? 0) < batch) break;
    }
    result[t.key] = total;
  }
  return result;
}
