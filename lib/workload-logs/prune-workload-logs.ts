import "server-only";
import { pool } from "@/lib/db/client";

/** Deletes workload log chunks older than the retention, in batches so no delete holds locks for long. */
export async function pruneWorkloadLogs(retentionDays: number, batchSize = 50_000): Promise<{ chunks_deleted: number }> {
  let total = 0;
  for (;;) {
    const { rowCount } = await pool().query(
      `DELETE FROM workload_logs WHERE id = ANY(ARRAY(SELECT id FROM workload_logs WHERE at < now() - make_interval(days => $1) LIMIT $2))`,
      [retentionDays, batchSize],
    );
    total += rowCount ?? 0;
    if ((rowCount ?? 0) < batchSize) break;
  }
  return { chunks_deleted: total };
}
