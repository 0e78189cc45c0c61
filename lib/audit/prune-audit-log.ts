import "server-only";
import { db } from "@/lib/db/client";
import { runCount } from "@/lib/db/statement";
import { PRUNE_AUDIT_BATCH } from "./statements";

/**
 * Deletes audit entries older than the retention period, in batches so a large backlog never
 * holds a long lock. Retention 0 keeps everything.
 */
export async function pruneAuditLog(retentionDays: number, batchSize = 5_000): Promise<{ deleted: number }> {
  if (retentionDays <= 0) return { deleted: 0 };
  let deleted = 0;
  for (;;) {
    const n = await runCount(db(), PRUNE_AUDIT_BATCH, [retentionDays, batchSize]);
    deleted += n;
    if (n < batchSize) return { deleted };
  }
}
