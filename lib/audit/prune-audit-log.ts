import "server-only";
import { db } from "@/lib/db/client";

/**
 * Deletes audit entries older than the retention period, in batches so a large backlog never
 * holds a long lock. Retention 0 keeps everything.
 */
export async function pruneAuditLog(retentionDays: number, batchSize = 5_000): Promise<{ deleted: number }> {
  if (retentionDays <= 0) return { deleted: 0 };
  let deleted = 0;
  for (;;) {
    const n = await db().$executeRaw`
      DELETE FROM audit_log WHERE id IN (
        SELECT id FROM audit_log WHERE created_at < now() - make_interval(days => ${retentionDays}::int)
        ORDER BY id LIMIT ${batchSize}::int)`;
    deleted += n;
    if (n < batchSize) return { deleted };
  }
}
