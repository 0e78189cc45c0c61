import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { emitEvent } from "@/lib/background/emit";
import { submittingTenant } from "@/lib/tenants/submitting-tenant";
import { insertJob } from "./insert-job";
import type { SubmitJobInput } from "./schemas";

/**
 * Submits a job: queued, or blocked by quota when the tenant's GPUs in use plus this job exceed
 * its quota (it returns to the queue by itself when quota frees). A job that can never run is
 * refused with 422. The job, its event and its audit entry are one statement under the tenant's
 * row lock (lib/jobs/insert-job.ts). The scheduler is woken at once.
 */
export async function submitJob(actor: Actor, input: SubmitJobInput) {
  const tenantId = submittingTenant(actor, input.tenant_id);
  const p = actor.principal;
  // a person signed in to the console (not a key) owns what they submit
  const submittedBy = (p.kind === "operator" || p.kind === "tenant") && p.userId && !p.keyId ? p.userId : undefined;
  const job = await insertJob(undefined, tenantId, input, p.label, { capWaiting: true, submittedBy, audit: actor });
  await emitEvent("scheduler/run.requested", { reason: "job submitted" });
  return job;
}
