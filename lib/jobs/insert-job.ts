import "server-only";
import type { Tx } from "@/lib/db/client";
import { forbidden, validationFailed } from "@/lib/errors";
import { assertSatisfiable } from "./assert-satisfiable";
import { jobSelect } from "./schemas";

export interface NewJob {
  name: string;
  gpu_count: number;
  gpu_type: string;
  priority: number;
  cluster_id?: string;
  max_retries: number;
  image?: string;
  command?: string;
  duration_s?: number;
}

/**
 * Creates a job inside the caller's transaction: queued, or blocked by quota. Refuses (422) a job
 * that can never run. `field` prefixes the paths of field errors (e.g. `steps[2].`).
 */
export async function insertJob(tx: Tx, tenantId: string, input: NewJob, actorLabel: string, opts: { pipelineId?: string; field?: string; submittedBy?: string } = {}) {
  const f = opts.field ?? "";
  // the tenant row lock orders concurrent submits of one tenant, so the quota snapshot is exact
  const rows = await tx.$queryRaw<Array<{ gpu_quota: number; status: string; in_use: number; out_of_funds: boolean }>>`
    SELECT t.gpu_quota, t.status,
           COALESCE((SELECT in_use FROM tenant_gpus_in_use(ARRAY[t.id])), 0) AS in_use,
           (t.billing_mode = 'prepaid' AND COALESCE((SELECT sum(amount_cents) FROM ledger_entries l WHERE l.tenant_id = t.id), 0) <= 0) AS out_of_funds
      FROM tenants t WHERE t.id = ${tenantId}::uuid FOR UPDATE OF t`;
  const tenant = rows[0];
  if (!tenant) throw validationFailed([{ path: "tenant_id", message: "No such tenant" }]);
  if (tenant.status !== "active") throw forbidden("Tenant is suspended");
  await assertSatisfiable(tx, { ...input, quota: tenant.gpu_quota }, f);
  const overQuota = tenant.in_use + input.gpu_count > tenant.gpu_quota;
  // a prepaid tenant without funds can queue work; it runs once funds arrive
  const blockReason = tenant.out_of_funds ? "billing" : overQuota ? "quota" : null;
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
      pipelineId: opts.pipelineId ?? null,
      submittedBy: opts.submittedBy ?? null,
      status: blockReason ? "blocked" : "queued",
      blockReason,
      pendingReason:
        blockReason === "billing"
          ? "Billing: your prepaid balance is used up; add funds and it runs"
          : blockReason === "quota"
            ? `Quota: your organisation holds ${tenant.in_use} of its ${tenant.gpu_quota} GPUs; this job needs ${input.gpu_count}`
            : "Waiting for the next scheduling cycle",
    },
    select: jobSelect,
  });
  await tx.jobEvent.create({ data: { jobId: created.id, fromStatus: null, toStatus: created.status, reason: blockReason === "billing" ? "submitted without prepaid funds" : overQuota ? "submitted over quota" : "submitted", actor: actorLabel } });
  return created;
}
