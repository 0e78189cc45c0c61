import "server-only";
import type { Actor } from "@/lib/auth/principal";
import type { Tx } from "@/lib/db/client";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db } from "@/lib/db/client";
import { forbidden, invalidTransition, notFound, staleReport, validationFailed } from "@/lib/errors";
import { advancePipeline } from "@/lib/pipelines/advance-pipeline";
import {
  backoffSeconds,
  exitCodeRetries,
  jobTransition,
  retryBackoffSeconds,
  type BackoffPolicy,
  type JobEvent,
  type JobStatus,
} from "./job-lifecycle";
import { agentMayReportOn } from "./placement-access";
import { releaseGpus } from "./release-gpus";
import { jobSelect, type UpdateJobInput } from "./schemas";

/** finishJob's work inside the caller's transaction (cancelling a pipeline cancels its jobs with it). */
export async function finishJobInTx(
  tx: Tx,
  actor: Actor,
  jobId: string,
  input: UpdateJobInput,
): Promise<{ freed: number; pipelineId: string | null }> {
  const p = actor.principal;
  if (p.kind !== "agent" && input.status === "interrupted") {
    throw forbidden("Only the node's agent reports a run as interrupted");
  }
  const rows = await tx.$queryRaw<
    Array<{
      tenant_id: string;
      status: JobStatus;
      failures: number;
      max_retries: number;
      attempts: number;
      fence: string | null;
      backoff_s: number | null;
      backoff_factor: number | null;
      max_backoff_s: number | null;
      on_exit_codes: number[] | null;
    }>
  >`
    SELECT j.tenant_id, j.status, j.failures, j.max_retries, j.attempts, j.fence::text AS fence,
           j.retry_backoff_s AS backoff_s, j.retry_backoff_factor AS backoff_factor, j.retry_backoff_max_s AS max_backoff_s, j.retry_on_exit_codes AS on_exit_codes
      FROM jobs j WHERE j.id = ${jobId}::uuid FOR UPDATE OF j`;
  const job = rows[0];
  if (!job) throw notFound("Job");
  if (p.kind === "tenant") {
    if (job.tenant_id !== p.tenantId) throw notFound("Job");
    if (input.status !== "cancelled") throw forbidden("Tenants can cancel their jobs; agents report how they ended");
  }
  if (p.kind === "agent") {
    // another cluster's job is not found, whatever the report says
    if (!(await agentMayReportOn(tx, p, jobId))) throw notFound("Job");
    const missing = (["attempt", "fence"] as const).filter((f) => input[f] === undefined);
    if (missing.length)
      throw validationFailed(
        missing.map((f) => ({
          path: f,
          message: "Agents must name the placement they report on (its heartbeat assignment's attempt and fence)",
        })),
      );
    if (input.status === "cancelled") throw forbidden("Agents report completed, failed or interrupted");
    if (job.status !== "running" || job.attempts !== input.attempt || job.fence !== input.fence) throw staleReport();
  }

  const event: JobEvent =
    input.status === "completed"
      ? { kind: "complete" }
      : input.status === "failed"
        ? { kind: "fail", retryable: exitCodeRetries(input.exit_code, job.on_exit_codes) }
        : input.status === "interrupted"
          ? { kind: "node_lost" }
          : { kind: "cancel" };
  const policy: BackoffPolicy | undefined =
    job.backoff_s !== null
      ? { backoff_s: job.backoff_s, backoff_factor: job.backoff_factor!, max_backoff_s: job.max_backoff_s! }
      : undefined;
  const t = jobTransition({ status: job.status, failures: job.failures, maxRetries: job.max_retries }, event);
  if (!t.ok) throw invalidTransition(t.reason);

  const final = t.to === "completed" || t.to === "failed" || t.to === "cancelled";
  const requeued = input.status === "interrupted";
  // The fence is compared in the statement that changes the job, not only in the read above.
  const changed = await tx.job.updateMany({
    where: { id: jobId, status: job.status, ...(p.kind === "agent" ? { attempts: input.attempt, fence: input.fence } : {}) },
    data: {
      status: t.to,
      failures: t.failures,
      exitCode: input.exit_code ?? null,
      error: input.error ?? null,
      finishedAt: final ? new Date() : null,
      blockReason: null,
      notBefore: t.retry
        ? new Date(Date.now() + (policy ? backoffSeconds(t.failures, policy) : retryBackoffSeconds(t.failures)) * 1000)
        : null,
      pendingReason: t.retry
        ? `Retry ${t.failures} of ${job.max_retries} after a ${policy ? backoffSeconds(t.failures, policy) : retryBackoffSeconds(t.failures)} s backoff`
        : requeued
          ? `Requeued: the node stopped the run (${input.error ?? "its lease lapsed"}); your retries were not spent`
          : null,
      ...(t.retry || requeued ? { startedAt: null } : {}),
    },
  });
  if (changed.count !== 1) throw p.kind === "agent" ? staleReport() : invalidTransition("The job changed meanwhile; read it again");
  // the job's new state first, then its GPUs: the allocation check sees a consistent pair
  const freed = job.status === "running" ? await releaseGpus(tx, jobId) : 0;
  const reason =
    input.status === "cancelled"
      ? "cancelled"
      : requeued
        ? `requeued: run interrupted on its node (${input.error ?? "lease lapsed"})`
        : t.retry
          ? `failed (exit ${input.exit_code ?? "?"}); retry ${t.failures} of ${job.max_retries}`
          : `${input.status}${input.exit_code !== undefined ? ` (exit ${input.exit_code})` : ""}`;
  await tx.jobEvent.create({ data: { jobId, fromStatus: job.status, toStatus: t.to, reason, actor: p.label } });
  await recordAudit(tx, actor, {
    action: `job.${input.status}`,
    targetType: "job",
    targetId: jobId,
    tenantId: job.tenant_id,
    details: { to: t.to, exit_code: input.exit_code ?? null, gpus_freed: freed, ...(input.attempt ? { attempt: input.attempt } : {}) },
  });
  return {
    freed,
    pipelineId: await tx.job.findUniqueOrThrow({ where: { id: jobId }, select: { pipelineId: true } }).then((j) => j.pipelineId),
  };
}

/**
 * Reports a job's end or cancels it. Agents report jobs placed on their nodes, and only about the
 * current placement: the report names its attempt and fence, and one that is not the job's current
 * running placement is stale (409 stale_report) and changes nothing, so a node that was cut off and
 * comes back can never end a run that moved elsewhere. Tenants may only cancel their own jobs;
 * operators may do either. GPUs are freed in the same transaction; a failure with retries left
 * requeues the job after a backoff; an interrupted run (the node stopped it when its lease lapsed)
 * is requeued without spending a retry.
 */
export async function finishJob(actor: Actor, jobId: string, input: UpdateJobInput) {
  const result = await db().$transaction((tx) => finishJobInTx(tx, actor, jobId, input));
  // a pipeline step's job ended: start what depended on it (the pipeline sweep would otherwise)
  if (result.pipelineId) await advancePipeline(result.pipelineId);
  if (result.freed > 0 || input.status === "failed" || result.pipelineId)
    await emitEvent("scheduler/run.requested", { reason: "GPUs freed" });
  return db().job.findUniqueOrThrow({ where: { id: jobId }, select: jobSelect });
}
