import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import type { Tx } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { finishJobInTx } from "@/lib/jobs/finish-job";
import { captureJobOutputs, logEvents, type StepWithJob } from "./advance-pipeline";
import { LOCK_STEP_JOBS } from "./statements";

/**
 * Stops a running pipeline inside the caller's transaction, which holds the pipeline's row lock:
 * running jobs are cancelled (each under its own row lock, so a job that completed a moment earlier
 * counts as completed, with its outputs, and one that had not is cancelled and never reports
 * again: its fence is gone), tool calls in flight are cancelled (their worker's result is fenced
 * out), waiting steps are skipped. Returns the GPUs freed.
 */
export async function stopPipelineInTx(
  tx: Tx,
  actor: Actor,
  pipelineId: string,
  how: { status: "cancelled" | "failed"; reason: string; kind: "control" | "deadline" },
): Promise<{ freed: number }> {
  const steps: StepWithJob[] = await tx.pipelineStep.findMany({
    where: { pipelineId },
    orderBy: { position: "asc" },
    include: { job: { select: { status: true, error: true, exitCode: true, attempts: true } } },
  });
  const now = new Date();
  let freed = 0;
  const log: Parameters<typeof logEvents>[2] = [];
  // the job rows first, locked, so their status cannot change under the decisions below
  const jobIds = steps.filter((s) => s.status === "running" && s.jobId).map((s) => s.jobId!);
  const locked = jobIds.length ? await run(tx, LOCK_STEP_JOBS, [jobIds]) : [];
  const jobStatus = new Map(locked.map((j) => [j.id, j.status]));
  await captureJobOutputs(
    tx,
    pipelineId,
    steps.map((s) => (s.job && s.jobId ? { ...s, job: { ...s.job, status: jobStatus.get(s.jobId) ?? s.job.status } } : s)),
  );
  for (const s of steps) {
    if (s.status === "waiting") {
      await tx.pipelineStep.update({ where: { id: s.id }, data: { status: "skipped", finishedAt: now } });
      log.push({ step: s.name, kind: "transition", iteration: s.iteration, message: `skipped: ${how.reason}` });
      continue;
    }
    if (s.status !== "running") continue;
    const current = s.jobId ? jobStatus.get(s.jobId) : undefined;
    if (s.kind === "job" && (current === "completed" || current === "failed" || current === "cancelled")) {
      // it ended before the stop: that outcome stands
      await tx.pipelineStep.update({
        where: { id: s.id },
        data: { status: current, finishedAt: now, ...(current === "failed" ? { error: "its job failed" } : {}) },
      });
      log.push({
        step: s.name,
        kind: "transition",
        iteration: s.iteration,
        message: current === "completed" ? "completed (before the pipeline stopped)" : `its job ${current}`,
      });
      continue;
    }
    if (s.kind === "job" && s.jobId) freed += (await finishJobInTx(tx, actor, s.jobId, { status: "cancelled", error: how.reason })).freed;
    await tx.pipelineStep.update({
      where: { id: s.id },
      data: { status: "cancelled", error: how.reason, finishedAt: now, callLeaseUntil: null, callDueAt: null },
    });
    log.push({
      step: s.name,
      kind: "transition",
      iteration: s.iteration,
      message: s.kind === "job" ? "cancelled: its job was cancelled" : "cancelled: the tool call in flight is abandoned",
    });
  }
  await tx.pipeline.update({ where: { id: pipelineId }, data: { status: how.status, reason: how.reason, finishedAt: now } });
  log.push({ step: null, kind: how.kind, message: `pipeline ${how.status}: ${how.reason}`, details: { gpus_freed: freed } });
  await logEvents(tx, pipelineId, log);
  const tenant = await tx.pipeline.findUniqueOrThrow({ where: { id: pipelineId }, select: { tenantId: true } });
  await recordAudit(tx, actor, {
    action: how.kind === "deadline" ? "pipeline.deadline_exceeded" : "pipeline.cancelled",
    targetType: "pipeline",
    targetId: pipelineId,
    tenantId: tenant.tenantId,
    details: { reason: how.reason, gpus_freed: freed },
  });
  return { freed };
}
