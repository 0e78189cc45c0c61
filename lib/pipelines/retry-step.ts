import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { invalidTransition, notFound } from "@/lib/errors";
import { advanceInTx, FRESH_RUN, logEvents, wake } from "./advance-pipeline";
import { lockPipelineOrThrow } from "./cancel-pipeline";
import { pipelineInclude } from "./present";

/**
 * Retries a failed step of a failed pipeline: the step runs again in the iteration it failed in
 * (a fresh job, or a fresh tool call with all its attempts), the steps skipped because of the
 * failure wait again, and the pipeline runs on. Audited.
 */
export async function retryPipelineStep(actor: Actor, pipelineId: string, stepName: string) {
  const started = await db().$transaction(async (tx) => {
    const row = await lockPipelineOrThrow(tx, actor, pipelineId);
    const step = await tx.pipelineStep.findUnique({ where: { pipelineId_name: { pipelineId, name: stepName } } });
    if (!step) throw notFound("Step");
    if (row.status !== "failed") throw invalidTransition(`A ${row.status} pipeline's steps cannot be retried; only a failed pipeline's`);
    if (step.status !== "failed") throw invalidTransition(`Step “${stepName}” is ${step.status}; only failed steps are retried`);
    const reset = { status: "waiting", ...FRESH_RUN };
    await tx.pipelineStep.update({ where: { id: step.id }, data: reset });
    const revived = await tx.pipelineStep.updateMany({ where: { pipelineId, status: "skipped" }, data: reset });
    await tx.pipeline.update({ where: { id: pipelineId }, data: { status: "running", reason: null, finishedAt: null } });
    await logEvents(tx, pipelineId, [
      {
        step: stepName,
        kind: "retry",
        iteration: step.iteration,
        message: `retried by ${actor.principal.label}; ${revived.count} skipped step(s) wait again`,
        details: { by: actor.principal.label, revived: revived.count },
      },
    ]);
    await recordAudit(tx, actor, {
      action: "pipeline.step_retried",
      targetType: "pipeline",
      targetId: pipelineId,
      tenantId: row.tenant_id,
      details: { step: stepName, iteration: step.iteration },
    });
    return advanceInTx(tx, pipelineId);
  });
  await wake(started);
  return db().pipeline.findUniqueOrThrow({ where: { id: pipelineId }, include: pipelineInclude });
}
