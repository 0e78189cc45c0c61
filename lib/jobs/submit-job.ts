import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db } from "@/lib/db/client";
import { forbidden, validationFailed } from "@/lib/errors";
import { insertJob } from "./insert-job";
import type { SubmitJobInput } from "./schemas";

/** The tenant a caller submits for: its own, or (operators) the one it names. */
export function submittingTenant(actor: Actor, tenantIdInBody: string | undefined): string {
  const p = actor.principal;
  if (p.kind === "tenant") {
    if (tenantIdInBody && tenantIdInBody !== p.tenantId) throw forbidden("Work can only be submitted for your own tenant");
    return p.tenantId;
  }
  if (p.kind === "operator") {
    if (!tenantIdInBody) throw validationFailed([{ path: "tenant_id", message: "Required with an operator key" }]);
    return tenantIdInBody;
  }
  throw forbidden("Agents do not submit work");
}

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
    await recordAudit(tx, actor, { action: "job.submitted", targetType: "job", targetId: created.id, tenantId, details: { name: input.name, gpu_count: input.gpu_count, gpu_type: input.gpu_type } });
    return created;
  });
  await emitEvent("scheduler/run.requested", { reason: "job submitted" });
  return job;
}
