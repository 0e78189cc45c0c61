import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { forbidden } from "@/lib/errors";
import { finishJob } from "./finish-job";
import { cancelRefusal, mayCancelJob } from "./job-permissions";
import { getJobOrThrow } from "./queries";

/** Cancels a job for someone allowed to (job-permissions.ts), through the one path that ends jobs. */
export async function cancelJob(actor: Actor, jobId: string) {
  const job = await getJobOrThrow(actor.principal, jobId);
  if (!mayCancelJob(actor.principal, job)) throw forbidden(cancelRefusal(actor.principal));
  return finishJob(actor, jobId, { status: "cancelled" });
}
