import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db } from "@/lib/db/client";
import { forbidden, invalidTransition, notFound } from "@/lib/errors";
import { advancePipeline } from "@/lib/pipelines/advance-pipeline";
import { jobTransition, retryBackoffSeconds, type JobStatus } from "./job-lifecycle";
import { releaseGpus } from "./release-gpus";
import { jobSelect, type UpdateJobInput } from "./schemas";

/**
 * Reports a job's end or cancels it. Agents report jobs on their cluster's nodes; tenants may only
 * cancel their own; operators may do either. GPUs are freed in the same transaction; a failure with
 * retries left requeues the job after a backoff.
 */
export async function finishJob(actor: Actor, jobId: string, input: UpdateJobInput) {
  const p = actor.principal;
  const result = await db().$transaction(async (tx) => {
    const rows = await tx.$queryRaw<Array<{ tenant_id: string; status: JobStatus; failures: number; max_retries: number; cluster_ids: string[] | null }>>`
      SELECT j.tenant_id, j.status, j.failures, j.max_retries,
             (SELECT array_agg(DISTINCT n.cluster_id) FROM gpus g JOIN nodes n ON n.id = g.node_id WHERE g.allocated_job_id = j.id) AS cluster_ids
        FROM jobs j WHERE j.id = ${jobId}::uuid FOR UPDATE OF j`;
    const job = rows[0];
    if (!job) throw notFound("Job");
    if (p.kind === "tenant") {
      if (job.tenant_id !== p.tenantId) throw notFound("Job");
      if (input.status !== "cancelled") throw forbidden("Tenants can cancel their jobs; agents report how they ended");
    }
    if (p.kind === "agent" && !(job.cluster_ids ?? []).includes(p.clusterId)) throw notFound("Job");
    if (p.kind === "agent" && input.status === "cancelled") throw forbidden("Agents report completed or failed");

    const event = input.status === "completed" ? { kind: "complete" as const } : input.status === "failed" ? { kind: "fail" as const } : { kind: "cancel" as const };
    const t = jobTransition({ status: job.status, failures: job.failures, maxRetries: job.max_retries }, event);
    if (!t.ok) throw invalidTransition(t.reason);

    const final = t.to === "completed" || t.to === "failed" || t.to === "cancelled";
    await tx.job.update({
      where: { id: jobId },
      data: {
        status: t.to,
        failures: t.failures,
        exitCode: input.exit_code ?? null,
        error: input.error ?? null,
        finishedAt: final ? new Date() : null,
        blockReason: null,
        notBefore: t.retry ? new Date(Date.now() + retryBackoffSeconds(t.failures) * 1000) : null,
        pendingReason: t.retry ? `Retry ${t.failures} of ${job.max_retries} after a ${retryBackoffSeconds(t.failures)} s backoff` : null,
        ...(t.retry ? { startedAt: null } : {}),
      },
    });
    // the job's new state first, then its GPUs: the allocation check sees a consistent pair
    const freed = job.status === "running" ? await releaseGpus(tx, jobId) : 0;
    const reason =
      input.status === "cancelled"
        ? "cancelled"
        : t.retry
          ? `failed (exit ${input.exit_code ?? "?"}); retry ${t.failures} of ${job.max_retries}`
          : `${input.status}${input.exit_code !== undefined ? ` (exit ${input.exit_code})` : ""}`;
    await tx.jobEvent.create({ data: { jobId, fromStatus: job.status, toStatus: t.to, reason, actor: p.label } });
    await recordAudit(tx, actor, { action: `job.${input.status}`, targetType: "job", targetId: jobId, tenantId: job.tenant_id, details: { to: t.to, exit_code: input.exit_code ?? null, gpus_freed: freed } });
    return { freed, pipelineId: await tx.job.findUniqueOrThrow({ where: { id: jobId }, select: { pipelineId: true } }).then((j) => j.pipelineId) };
  });
  // a pipeline step's job ended: start what depended on it (the pipeline sweep would otherwise)
  if (result.pipelineId) await advancePipeline(result.pipelineId);
  if (result.freed > 0 || input.status === "failed" || result.pipelineId) await emitEvent("scheduler/run.requested", { reason: "GPUs freed" });
  return db().job.findUniqueOrThrow({ where: { id: jobId }, select: jobSelect });
}
