import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db } from "@/lib/db/client";
import { forbidden, unsatisfiable, validationFailed } from "@/lib/errors";
import { jobSelect, type SubmitJobInput } from "./schemas";

/**
 * Submits a job: queued, or blocked by quota when the tenant's GPUs in use plus this job exceed
 * its quota. A job that can never run (more GPUs than the tenant's whole quota, or than the fleet
 * has of that type) is refused with 422. The scheduler is woken at once.
 */
export async function submitJob(actor: Actor, input: SubmitJobInput) {
  const p = actor.principal;
  let tenantId: string;
  if (p.kind === "tenant") {
    if (input.tenant_id && input.tenant_id !== p.tenantId) throw forbidden("Jobs can only be submitted for your own tenant");
    tenantId = p.tenantId;
  } else if (p.kind === "operator") {
    if (!input.tenant_id) throw validationFailed([{ path: "tenant_id", message: "Required with an operator key" }]);
    tenantId = input.tenant_id;
  } else {
    throw forbidden("Agents do not submit jobs");
  }

  const job = await db().$transaction(async (tx) => {
    // the tenant row lock orders concurrent submits of one tenant, so the quota snapshot is exact
    const rows = await tx.$queryRaw<Array<{ gpu_quota: number; status: string; in_use: number }>>`
      SELECT t.gpu_quota, t.status,
             (SELECT count(*)::int FROM gpus g JOIN jobs j ON j.id = g.allocated_job_id WHERE j.tenant_id = t.id) AS in_use
        FROM tenants t WHERE t.id = ${tenantId}::uuid FOR UPDATE OF t`;
    const tenant = rows[0];
    if (!tenant) throw validationFailed([{ path: "tenant_id", message: "No such tenant" }]);
    if (tenant.status !== "active") throw forbidden("Tenant is suspended");
    if (input.gpu_count > tenant.gpu_quota) {
      throw unsatisfiable(`The job needs ${input.gpu_count} GPUs but the tenant's whole quota is ${tenant.gpu_quota}`, [{ path: "gpu_count", message: `More than the quota of ${tenant.gpu_quota}` }]);
    }
    if (input.cluster_id && !(await tx.cluster.count({ where: { id: input.cluster_id } }))) {
      throw validationFailed([{ path: "cluster_id", message: "No such cluster" }]);
    }
    const capacity = await tx.gpu.count({
      where: { gpuType: input.gpu_type, status: { not: "missing" }, ...(input.cluster_id ? { node: { clusterId: input.cluster_id } } : {}) },
    });
    if (input.gpu_count > capacity) {
      throw unsatisfiable(
        `The fleet has ${capacity} ${input.gpu_type} GPUs${input.cluster_id ? " in that cluster" : ""}; the job needs ${input.gpu_count}`,
        [{ path: "gpu_count", message: `More than the ${capacity} ${input.gpu_type} GPUs there are` }],
      );
    }
    const overQuota = tenant.in_use + input.gpu_count > tenant.gpu_quota;
    const created = await tx.job.create({
      data: {
        tenantId,
        name: input.name,
        gpuCount: input.gpu_count,
        gpuType: input.gpu_type,
        priority: input.priority,
        clusterId: input.cluster_id ?? null,
        maxRetries: input.max_retries,
        image: input.image ?? null,
        command: input.command ?? null,
        durationS: input.duration_s ?? null,
        status: overQuota ? "blocked" : "queued",
        blockReason: overQuota ? "quota" : null,
        pendingReason: overQuota ? `Quota: your organisation holds ${tenant.in_use} of its ${tenant.gpu_quota} GPUs; this job needs ${input.gpu_count}` : "Waiting for the next scheduling cycle",
      },
      select: jobSelect,
    });
    await tx.jobEvent.create({ data: { jobId: created.id, fromStatus: null, toStatus: created.status, reason: overQuota ? "submitted over quota" : "submitted", actor: p.label } });
    await recordAudit(tx, actor, { action: "job.submitted", targetType: "job", targetId: created.id, tenantId, details: { name: input.name, gpu_count: input.gpu_count, gpu_type: input.gpu_type } });
    return created;
  });
  await emitEvent("scheduler/run.requested", { reason: "job submitted" });
  return job;
}
