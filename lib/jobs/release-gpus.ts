import "server-only";
import type { Tx } from "@/lib/db/client";

/** Frees a job's GPUs inside the caller's transaction (the job's state changes in the same one). */
export async function releaseGpus(tx: Tx, jobId: string): Promise<number> {
  return tx.$executeRaw`UPDATE gpus SET allocated_job_id = NULL, updated_at = now() WHERE allocated_job_id = ${jobId}::uuid`;
}
