import "server-only";
import type { Tx } from "@/lib/db/client";
import { lockPrismaTransaction } from "@/lib/db/locks";

/**
 * Jobs running on nodes that were quarantined or went offline go back to the queue without
 * spending the tenant's retries; their GPUs (on every node of the gang) are freed. Runs inside the
 * transaction that changed the nodes' state.
 *
 * It takes the allocation lock first. A scheduling cycle reads the node as available and places
 * work on it without locking the node's row; had this transaction changed the node and looked for
 * its jobs while such a cycle was still open, it would have found none of that cycle's work, and
 * both would commit: work running on a node out of service, never requeued. Under the lock, a
 * cycle under way commits first and its work is found here; a later cycle reads the node's new state.
 */
export async function requeueJobsOnNodes(tx: Tx, nodeIds: string[], why: string, actor: string): Promise<string[]> {
  if (nodeIds.length === 0) return [];
  await lockPrismaTransaction(tx, "scheduler");
  const jobs = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT j.id FROM jobs j
     WHERE j.status = 'running' AND EXISTS (SELECT 1 FROM gpus g WHERE g.allocated_job_id = j.id AND g.node_id = ANY(${nodeIds}::uuid[]))
     FOR UPDATE OF j`;
  return requeueJobs(
    tx,
    jobs.map((j) => j.id),
    why,
    actor,
  );
}

/** The running jobs named go back to the queue, retries untouched, their GPUs freed; returns those that were running. */
export async function requeueJobs(tx: Tx, jobIds: string[], why: string, actor: string): Promise<string[]> {
  if (jobIds.length === 0) return [];
  const moved = await tx.$queryRaw<Array<{ id: string }>>`
    UPDATE jobs SET status = 'queued', started_at = NULL, not_before = NULL, updated_at = now(),
           pending_reason = ${`Requeued: ${why}; your retries were not spent`}
     WHERE id = ANY(${jobIds}::uuid[]) AND status = 'running' RETURNING id::text`;
  const ids = moved.map((j) => j.id);
  if (ids.length === 0) return [];
  await tx.$executeRaw`UPDATE gpus SET allocated_job_id = NULL, updated_at = now() WHERE allocated_job_id = ANY(${ids}::uuid[])`;
  await tx.$executeRaw`
    INSERT INTO job_events (job_id, from_status, to_status, reason, actor)
    SELECT id, 'running', 'queued', ${`requeued: ${why}`}, ${actor} FROM unnest(${ids}::uuid[]) AS id`;
  return ids;
}
