import "server-only";
import type { Tx } from "@/lib/db/client";
import { db } from "@/lib/db/client";
import { insertJob } from "@/lib/jobs/insert-job";
import { isAppError } from "@/lib/errors";
import { advance, type StepState } from "./dag";

/** Applies the DAG's next decisions to one pipeline inside the caller's transaction. */
export async function advanceInTx(tx: Tx, pipelineId: string): Promise<{ submitted: number }> {
  const rows = await tx.$queryRaw<Array<{ tenant_id: string; status: string; tenant_status: string; max_priority: number }>>`
    SELECT p.tenant_id, p.status, t.status AS tenant_status, t.max_priority FROM pipelines p JOIN tenants t ON t.id = p.tenant_id WHERE p.id = ${pipelineId}::uuid FOR UPDATE OF p`;
  const pipeline = rows[0];
  // a suspended tenant's pipelines wait where they are and go on once it is reactivated
  if (!pipeline || pipeline.status !== "running" || pipeline.tenant_status !== "active") return { submitted: 0 };
  const steps = await tx.pipelineStep.findMany({ where: { pipelineId }, orderBy: { position: "asc" }, include: { job: { select: { status: true } } } });
  const state: StepState[] = steps.map((s) => ({ name: s.name, dependsOn: s.dependsOn, status: s.status as StepState["status"], repeat: s.repeat, iteration: s.iteration, jobStatus: s.job?.status ?? null }));
  const decision = advance(state);
  const byName = new Map(steps.map((s) => [s.name, s]));
  const starting = new Set(decision.submit);
  // steps starting a run get their status together with their new job (a running step always has one)
  for (const u of decision.updates) {
    if (!starting.has(u.name)) await tx.pipelineStep.update({ where: { id: byName.get(u.name)!.id }, data: { status: u.status, iteration: u.iteration } });
  }
  let submitted = 0;
  for (const name of decision.submit) {
    const step = byName.get(name)!;
    const iteration = decision.updates.find((u) => u.name === name)?.iteration ?? step.iteration;
    try {
      const job = await insertJob(
        tx,
        pipeline.tenant_id,
        {
          name: `${name}${step.repeat > 1 ? ` #${iteration + 1}` : ""}`,
          gpu_count: step.gpuCount,
          gpu_type: step.gpuType,
          // an operator may have capped the tenant's priority since the pipeline was accepted
          priority: Math.max(step.priority, pipeline.max_priority),
          max_retries: step.maxRetries,
          image: step.image ?? undefined,
          command: step.command ?? undefined,
          duration_s: step.durationS ?? undefined,
        },
        "pipeline",
        { pipelineId },
      );
      await tx.pipelineStep.update({ where: { id: step.id }, data: { jobId: job.id, status: "running", iteration } });
      submitted++;
    } catch (e) {
      if (!isAppError(e)) throw e;
      // the fleet or quota changed since the pipeline was accepted: the step cannot run
      await tx.pipelineStep.update({ where: { id: step.id }, data: { status: "failed" } });
      decision.log.push({ step: name, message: `could not be submitted: ${e.message}` });
      decision.pipeline = "failed";
      await tx.pipelineStep.updateMany({ where: { pipelineId, status: "waiting" }, data: { status: "cancelled" } });
    }
  }
  if (decision.pipeline !== "running") {
    await tx.pipeline.update({ where: { id: pipelineId }, data: { status: decision.pipeline, finishedAt: new Date() } });
  }
  if (decision.log.length) {
    await tx.pipelineEvent.createMany({ data: decision.log.map((l) => ({ pipelineId, step: l.step, message: l.message })) });
  }
  return { submitted };
}

export async function advancePipeline(pipelineId: string): Promise<{ submitted: number }> {
  return db().$transaction((tx) => advanceInTx(tx, pipelineId));
}

/** The sweep: advances every running pipeline (catches whatever a finished job's own call missed). */
export async function advanceRunningPipelines(): Promise<{ pipelines: number; submitted: number }> {
  const running = await db().pipeline.findMany({ where: { status: "running" }, select: { id: true } });
  let submitted = 0;
  for (const p of running) submitted += (await advancePipeline(p.id)).submitted;
  return { pipelines: running.length, submitted };
}
