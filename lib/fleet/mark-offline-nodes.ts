import "server-only";
import { emitEvent } from "@/lib/background/emit";
import { db, txClient } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { requeueJobsOnNodes } from "@/lib/jobs/requeue-lost-jobs";
import { interruptPodsOnNodes } from "@/lib/pods/interrupt-pods";
import { MARK_OFFLINE_NODES } from "./statements";

/**
 * Marks nodes whose heartbeats stopped as offline, remembering the state each was in, in one
 * statement. Rows another transaction holds are skipped; the next sweep catches them.
 */
export async function markOfflineNodes(
  afterSeconds: number,
): Promise<{ marked: number; node_ids: string[]; jobs_requeued: number; pods_interrupted: number }> {
  const { rows, requeued, pods } = await db().$transaction(async (tx) => {
    const rows = await run(tx, MARK_OFFLINE_NODES, [afterSeconds, `no heartbeat for ${afterSeconds} s`]);
    const requeued = await requeueJobsOnNodes(
      tx,
      rows.map((r) => r.node_id),
      "node went offline",
      "system",
    );
    const pods = await interruptPodsOnNodes(
      txClient(tx),
      rows.map((r) => r.node_id),
      "its node went offline",
      "system",
    );
    return { rows, requeued, pods };
  });
  if (requeued.length || pods.length) await emitEvent("scheduler/run.requested", { reason: "nodes went offline" });
  if (rows.length) await emitEvent("endpoints/reconcile.requested", { reason: "nodes went offline" });
  return { marked: rows.length, node_ids: rows.map((r) => r.node_id), jobs_requeued: requeued.length, pods_interrupted: pods.length };
}
