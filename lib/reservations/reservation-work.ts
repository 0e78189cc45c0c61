import "server-only";
import { txClient, type Tx } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { stopReplicas } from "@/lib/endpoints/reconcile-endpoints";
import { requeueJobs } from "@/lib/jobs/requeue-lost-jobs";
import {
  CANCEL_NAMED_JOBS,
  FREE_JOB_GPUS,
  LOCK_FOREIGN_JOBS,
  LOCK_FOREIGN_REPLICAS,
  LOCK_JOBS_INSIDE,
  LOCK_REPLICAS_INSIDE,
} from "./upkeep-statements";

// The work a reservation's start and end move, inside the transaction that records the change.

export interface MovedWork {
  cancelled: string[];
  requeued: string[];
  replicas: number;
  /** nodes whose handover (wipe, attestation) began because the tenancy ended */
  handovers?: string[];
}

/**
 * When a reservation ends (its end, an early release, a cancellation): work that named it and runs
 * or waits is cancelled (it may run nowhere else); work of its tenant that ran inside it without
 * naming it goes back to the queue, its retries untouched; replicas inside it stop (an endpoint
 * that named no reservation gets them back elsewhere from the reconciler). Each run's last segment
 * is billed at rate 0, inside the reservation.
 */
export async function stopWorkInside(tx: Tx, reservationId: string, why: string, actor: string): Promise<MovedWork> {
  const cancelled = await run(tx, CANCEL_NAMED_JOBS, [
    reservationId,
    `Cancelled: ${why}; the job named it and runs nowhere else`,
    why,
    actor,
  ]);
  const ids = cancelled.map((r) => r.id);
  if (ids.length) await run(tx, FREE_JOB_GPUS, [ids]);
  const inside = await run(tx, LOCK_JOBS_INSIDE, [reservationId]);
  const requeued = await requeueJobs(
    tx,
    inside.map((j) => j.id),
    why,
    actor,
  );
  const replicas = await run(tx, LOCK_REPLICAS_INSIDE, [reservationId]);
  await stopReplicas(
    txClient(tx),
    replicas.map((r) => ({ id: r.id, reason: why })),
  );
  return { cancelled: ids, requeued, replicas: replicas.length };
}

/**
 * When a reservation starts: work on its nodes that is not its own (work that overran the
 * duration it declared when it was placed before the booking) leaves, jobs back to the queue
 * without spending retries, replicas to be placed elsewhere by the reconciler.
 */
export async function evictForeignWork(tx: Tx, reservationId: string, actor: string): Promise<MovedWork> {
  const jobs = await run(tx, LOCK_FOREIGN_JOBS, [reservationId]);
  const requeued = await requeueJobs(
    tx,
    jobs.map((j) => j.id),
    "its node is reserved from now (it ran past the duration it declared)",
    actor,
  );
  const replicas = await run(tx, LOCK_FOREIGN_REPLICAS, [reservationId]);
  await stopReplicas(
    txClient(tx),
    replicas.map((r) => ({ id: r.id, reason: "its node is reserved from now; replaced elsewhere" })),
  );
  return { cancelled: [], requeued, replicas: replicas.length };
}
