import "server-only";
import type { Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { forbidden, validationFailed } from "@/lib/errors";
import { assertFitsReservation, assertSatisfiable } from "./assert-satisfiable";
import { jobSelect } from "./schemas";
import { assertUnderWaitingCap } from "./waiting-cap";

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
  env?: Record<string, string>;
  /** retry policy beyond max_retries: backoff, and which exit codes retry (any, when absent) */
  retry?: { backoff_s: number; backoff_factor: number; max_backoff_s: number; on_exit_codes?: number[] };
  reservation_id?: string;
}

/**
 * Creates a job inside the caller's transaction: queued, or blocked by quota. Refuses (422) a job
 * that can never run, (400) a priority better than the tenant may use, and (429) a submission past
 * the tenant's cap on waiting jobs (`capWaiting`: direct submissions; steps of an accepted pipeline
 * are bounded by its size instead). `field` prefixes the paths of field errors (e.g. `steps[2].`).
 */
export async function insertJob(
  tx: Tx,
  tenantId: string,
  input: NewJob,
  actorLabel: string,
  opts: { pipelineId?: string; field?: string; capWaiting?: boolean; submittedBy?: string } = {},
) {
  const f = opts.field ?? "";
  // the tenant row lock orders concurrent submits of one tenant, so the quota snapshot and the
  // waiting count are exact
  const rows = await tx.$queryRaw<
    Array<{ gpu_quota: number; status: string; max_priority: number; in_use: number; out_of_funds: boolean }>
  >`
    SELECT t.gpu_quota, t.status, t.max_priority,
           COALESCE((SELECT in_use FROM tenant_gpus_in_use(ARRAY[t.id])), 0) AS in_use,
           (t.billing_mode = 'prepaid' AND COALESCE((SELECT sum(amount_cents) FROM ledger_entries l WHERE l.tenant_id = t.id), 0) <= 0) AS out_of_funds
      FROM tenants t WHERE t.id = ${tenantId}::uuid FOR UPDATE OF t`;
  const tenant = rows[0];
  if (!tenant) throw validationFailed([{ path: "tenant_id", message: "No such tenant" }]);
  if (tenant.status !== "active") throw forbidden("Tenant is suspended");
  if (input.priority < tenant.max_priority) {
    throw validationFailed([
      { path: `${f}priority`, message: `Your organisation's highest allowed priority is ${tenant.max_priority} (1 is highest)` },
    ]);
  }
  // tenant code runs only in containers: a command needs an image, the operator's default at the least
  const image = input.image ?? (input.command ? env().DEFAULT_JOB_IMAGE : undefined);
  if (input.command && !image) {
    throw validationFailed([
      {
        path: `${f}image`,
        message: "Required with a command: commands run only inside a container image, and no default image is configured",
      },
    ]);
  }
  if (opts.capWaiting) await assertUnderWaitingCap(tx, tenantId);
  await assertSatisfiable(
    tx,
    { ...input, quota: tenant.gpu_quota, needs_containers: Boolean(image || input.command), burst_tenant_id: tenantId },
    f,
  );
  if (input.reservation_id) await assertFitsReservation(tx, tenantId, { ...input, reservation_id: input.reservation_id }, f);
  // work inside a reservation is paid by it and outside the quota: it waits for its reservation, never for quota
  const overQuota = !input.reservation_id && tenant.in_use + input.gpu_count > tenant.gpu_quota;
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
      image: image ?? null,
      command: input.command ?? null,
      durationS: input.duration_s ?? null,
      env: input.env ?? {},
      ...(input.retry
        ? {
            retryBackoffS: input.retry.backoff_s,
            retryBackoffFactor: input.retry.backoff_factor,
            retryBackoffMaxS: input.retry.max_backoff_s,
            retryOnExitCodes: input.retry.on_exit_codes ?? [],
          }
        : {}),
      reservationId: input.reservation_id ?? null,
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
  await tx.jobEvent.create({
    data: {
      jobId: created.id,
      fromStatus: null,
      toStatus: created.status,
      reason: blockReason === "billing" ? "submitted without prepaid funds" : overQuota ? "submitted over quota" : "submitted",
      actor: actorLabel,
    },
  });
  return created;
}
