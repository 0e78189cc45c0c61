import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db } from "@/lib/db/client";
import { submittingTenant } from "@/lib/tenants/submitting-tenant";
import { insertJob } from "./insert-job";
import type { SubmitJobInput } from "./schemas";

/**
 * Submits a job: queued, or blocked by quota when the tenant's GPUs in use plus this job exceed
 * its quota (it returns to the queue by itself when quota frees). A job that can never run is
 * refused with 422. The scheduler is woken at once.
 */
export async function submitJob(actor: Actor, input: SubmitJobInput) {
  const tenantId = submittingTenant(actor, input.tenant_id);
  const job = await db().$transaction(async (tx) => {
    const p = actor.principal;
    // a person signed in to the console (not a key) owns what they submit
    const submittedBy = (p.kind === "operator" || p.kind === "tenant") && p.userId && !p.keyId ? p.userId : undefined;
    const created = await insertJob(tx, tenantId, input, p.label, { capWaiting: true, submittedBy });
    await recordAudit(tx, actor, {
      action: "job.submitted",
      targetType: "job",
      targetId: created.id,
      tenantId,
      details: { name: input.name, gpu_count: input.gpu_count, gpu_type: input.gpu_type },
    });
    return created;
  });
  await emitEvent("scheduler/run.requested", { reason: "job submitted" });
  return job;
}
