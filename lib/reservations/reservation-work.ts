import "server-only";
import { txClient, type Tx } from "@/lib/db/client";
import { stopReplicas } from "@/lib/endpoints/reconcile-endpoints";
import { requeueJobs } from "@/lib/jobs/requeue-lost-jobs";

// The work a reservation's start and end move, inside the transaction that records the change.

export interface MovedWork {
  cancelled: string[];
  requeued: string[];
  replicas: number;
}

/**
 * When a reservation ends (its end, an early release, a cancellation): work that named it and runs
 * or waits is cancelled (it may run nowhere else); work of its tenant that ran inside it without
 * naming it goes back to the queue, its retries untouched; replicas inside it stop (an endpoint
 * that named no reservation gets them back elsewhere from the reconciler). Each run's last segment
 * is billed at rate 0, inside the reservation.
 */
export async function stopWorkInside(tx: Tx, reservationId: string, why: string, actor: string): Promise<MovedWork> {
  const cancelled = await tx.$queryRaw<Array<{ id: string }>>`
    WITH named AS (
      SELECT id, status FROM jobs WHERE reservation_id = ${reservationId}::uuid AND status IN ('queued', 'blocked', 'running') FOR UPDATE
    ), done AS (
      UPDATE jobs j SET status = 'cancelled', finished_at = now(), updated_at = now(), block_reason = NULL, pending_reason = NULL,
             error = ${`Cancelled: ${why}; the job named it and runs nowhere else`}
        FROM named WHERE j.id = named.id RETURNING j.id, named.status AS from_status
    ), events AS (
      INSERT INTO job_events (job_id, from_status, to_status, reason, actor) SELECT id, from_status, 'cancelled', ${why}, ${actor} FROM done
    )
    SELECT id::text FROM done`;
  const ids = cancelled.map((r) => r.id);
  if (ids.length) await tx.$executeRaw`UPDATE gpus SET allocated_job_id = NULL, updated_at = now() WHERE allocated_job_id = ANY(${ids}::uuid[])`;
  const inside = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT j.id::text FROM jobs j JOIN job_placements p ON p.job_id = j.id AND p.attempt = j.attempts
     WHERE j.status = 'running' AND p.reservation_id = ${reservationId}::uuid FOR UPDATE OF j`;
  const requeued = await requeueJobs(tx, inside.map((j) => j.id), why, actor);
  const replicas = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id::text FROM endpoint_replicas WHERE reservation_id = ${reservationId}::uuid AND status <> 'stopped' FOR UPDATE`;
  await stopReplicas(txClient(tx), replicas.map((r) => ({ id: r.id, reason: why })));
  return { cancelled: ids, requeued, replicas: replicas.length };
}

/**
 * When a reservation starts: work on its nodes that is not its own (work that overran the
 * duration it declared when it was placed before the booking) leaves, jobs back to the queue
 * without spending retries, replicas to be placed elsewhere by the reconciler.
 */
export async function evictForeignWork(tx: Tx, reservationId: string, actor: string): Promise<MovedWork> {
  const jobs = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT j.id::text FROM jobs j LEFT JOIN job_placements p ON p.job_id = j.id AND p.attempt = j.attempts
     WHERE j.status = 'running' AND p.reservation_id IS DISTINCT FROM ${reservationId}::uuid
       AND j.id IN (SELECT g.allocated_job_id FROM reservation_nodes rn JOIN gpus g ON g.node_id = rn.node_id
                     WHERE rn.reservation_id = ${reservationId}::uuid AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now())
     FOR UPDATE OF j`;
  const requeued = await requeueJobs(tx, jobs.map((j) => j.id), "its node is reserved from now (it ran past the duration it declared)", actor);
  const replicas = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT r.id::text FROM endpoint_replicas r JOIN reservation_nodes rn ON rn.node_id = r.node_id
     WHERE rn.reservation_id = ${reservationId}::uuid AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now()
       AND r.status <> 'stopped' AND r.reservation_id IS DISTINCT FROM ${reservationId}::uuid FOR UPDATE OF r`;
  await stopReplicas(txClient(tx), replicas.map((r) => ({ id: r.id, reason: "its node is reserved from now; replaced elsewhere" })));
  return { cancelled: [], requeued, replicas: replicas.length };
}
