import "server-only";
import { emitEvent } from "@/lib/background/emit";
import { db, txClient } from "@/lib/db/client";
import { requeueJobsOnNodes } from "@/lib/jobs/requeue-lost-jobs";
import { interruptPodsOnNodes } from "@/lib/pods/interrupt-pods";

/**
 * Marks nodes whose heartbeats stopped as offline, remembering the state each was in, in one
 * statement. Rows another transaction holds are skipped; the next sweep catches them.
 */
export async function markOfflineNodes(afterSeconds: number): Promise<{ marked: number; node_ids: string[]; jobs_requeued: number; pods_interrupted: number }> {
  const { rows, requeued, pods } = await db().$transaction(async (tx) => {
    const rows = await tx.$queryRaw<Array<{ node_id: string }>>`
    WITH stale AS (
      SELECT id, status FROM nodes
       WHERE status <> 'offline' AND COALESCE(last_heartbeat_at, created_at) < now() - make_interval(secs => ${afterSeconds}::int)
       FOR UPDATE SKIP LOCKED
    ), marked AS (
      UPDATE nodes n SET status = 'offline', status_before_offline = s.status, updated_at = now()
        FROM stale s WHERE n.id = s.id
      RETURNING n.id, s.status AS from_status
    )
    INSERT INTO node_events (node_id, from_status, to_status, reason, actor)
    SELECT id, from_status, 'offline', ${`no heartbeat for ${afterSeconds} s`}, 'system' FROM marked
    RETURNING node_id`;
    const requeued = await requeueJobsOnNodes(tx, rows.map((r) => r.node_id), "node went offline", "system");
    const pods = await interruptPodsOnNodes(txClient(tx), rows.map((r) => r.node_id), "its node went offline", "system");
    return { rows, requeued, pods };
  });
  if (requeued.length || pods.length) await emitEvent("scheduler/run.requested", { reason: "nodes went offline" });
  if (rows.length) await emitEvent("endpoints/reconcile.requested", { reason: "nodes went offline" });
  return { marked: rows.length, node_ids: rows.map((r) => r.node_id), jobs_requeued: requeued.length, pods_interrupted: pods.length };
}
