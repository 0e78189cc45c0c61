import "server-only";
import { randomUUID } from "node:crypto";
import { Prisma } from "@/lib/generated/prisma/client";
import { emitEvent } from "@/lib/background/emit";
import type { Tx } from "@/lib/db/client";
import { db } from "@/lib/db/client";
import { run, type Runner } from "@/lib/db/statement";
import { isAppError } from "@/lib/errors";
import { insertJob } from "@/lib/jobs/insert-job";
import { oneOf } from "@/lib/vocabulary";
import { advance, type LogEntry, type Outcome, type StepState } from "./dag";
import { ExpressionError, renderHeader, renderJson, renderTemplate, type HeaderValue, type Json, type Scope } from "./expressions";
import { stepLoop } from "./present";
import { STEP_KINDS, STEP_STATUSES } from "./schemas";
import { CAPTURE_JOB_OUTPUT, LATEST_OUTPUTS, LOCK_PIPELINE_TO_ADVANCE } from "./statements";

// Applies the DAG's decisions (lib/pipelines/dag.ts) to one pipeline inside one transaction, under
// the pipeline's row lock: captures the outputs of steps whose job completed, decides, starts what
// may start (a job submitted with its templates resolved, or a tool call queued for the background
// workers), and writes every transition to the workflow log.

export type StepWithJob = Prisma.PipelineStepGetPayload<{
  include: { job: { select: { status: true; error: true; exitCode: true; attempts: true } } };
}>;

/** A step about to run again (next loop iteration, a retry): nothing of its last run carries over. */
export const FRESH_RUN = {
  jobId: null,
  error: null,
  callAttempt: 0,
  callFence: null,
  callDueAt: null,
  callLeaseUntil: null,
  startedAt: null,
  finishedAt: null,
} as const;

export interface StepOutcome {
  outcome: Outcome;
  error?: string;
}

/** Each step's latest output (by iteration); a step without one maps to undefined. */
export async function latestOutputs(tx: Runner, pipelineId: string, names: string[]): Promise<Record<string, Json | undefined>> {
  const rows = await run(tx, LATEST_OUTPUTS, [pipelineId]);
  const out: Record<string, Json | undefined> = Object.fromEntries(names.map((n) => [n, undefined]));
  for (const r of rows) out[r.step] = r.output;
  return out;
}

export async function logEvents(tx: Tx, pipelineId: string, entries: Array<Omit<LogEntry, "kind"> & { kind: string }>) {
  if (!entries.length) return;
  await tx.pipelineEvent.createMany({
    data: entries.map((l) => ({
      pipelineId,
      step: l.step,
      message: l.message,
      kind: l.kind,
      iteration: l.iteration ?? null,
      details: (l.details as Prisma.InputJsonValue) ?? Prisma.DbNull,
    })),
  });
}

/** A job step whose job completed hands its placement's posted outputs to the pipeline. */
export async function captureJobOutputs(tx: Tx, pipelineId: string, steps: StepWithJob[]) {
  for (const s of steps) {
    if (s.kind !== "job" || s.status !== "running" || s.job?.status !== "completed" || !s.jobId) continue;
    const rows = await run(tx, CAPTURE_JOB_OUTPUT, [pipelineId, s.name, s.iteration, s.jobId, s.job.attempts]);
    if (rows[0])
      await logEvents(tx, pipelineId, [
        {
          step: s.name,
          kind: "output",
          iteration: s.iteration,
          message: `output of ${rows[0].bytes} B from attempt ${s.job.attempts}`,
          details: { bytes: rows[0].bytes, source: "job", attempt: s.job.attempts },
        },
      ]);
  }
}

function jobFailure(job: NonNullable<StepWithJob["job"]>): string {
  return `its job failed${job.exitCode !== null ? ` with exit code ${job.exitCode}` : ""}${job.error ? ` (${job.error.slice(0, 300)})` : ""}; retries spent`;
}

function toState(r: StepWithJob, given: Record<string, StepOutcome>): StepState {
  let outcome: Outcome | null = null;
  let error: string | null = r.error;
  if (r.status === "running") {
    if (r.kind === "job" && r.job && (r.job.status === "completed" || r.job.status === "failed" || r.job.status === "cancelled")) {
      outcome = r.job.status;
      if (r.job.status === "failed") error = jobFailure(r.job);
    } else if (given[r.name]) {
      outcome = given[r.name]!.outcome;
      error = given[r.name]!.error ?? null;
    }
  }
  return {
    name: r.name,
    dependsOn: r.dependsOn,
    kind: oneOf(STEP_KINDS, r.kind, "pipeline_steps.kind"),
    status: oneOf(STEP_STATUSES, r.status, "pipeline_steps.status"),
    iteration: r.iteration,
    outcome,
    error,
    loop: stepLoop(r),
    loopStartedAt: r.loopStartedAt,
  };
}

/** Resolves a step's templates against the outputs its dependencies posted (an ExpressionError names the field). */
function resolveJob(step: StepWithJob, scope: Scope) {
  const at = (field: string, f: () => string) => {
    try {
      return f();
    } catch (e) {
      if (e instanceof ExpressionError) throw new ExpressionError(`${field}: ${e.message}`, e.missing);
      throw e;
    }
  };
  const command = step.command ? at("command", () => renderTemplate(step.command!, scope)) : undefined;
  const env = Object.fromEntries(
    Object.entries((step.env ?? {}) as Record<string, string>).map(([k, v]) => [k, at(`env.${k}`, () => renderTemplate(v, scope))]),
  );
  return { command, env };
}

/** A tool call's request with its templates resolved; its headers keep secrets as references (SecretReference). */
export interface ResolvedRequest {
  fields: Record<string, Json>;
  headers: Record<string, HeaderValue>;
}

/**
 * Resolves a tool call's request. No secret's value is involved: the headers keep `${secrets.NAME}`
 * as references the worker fills in after the allow-list and address checks, right before sending.
 */
export function resolveRequest(step: { request: unknown }, scope: Scope): ResolvedRequest {
  try {
    const { headers, ...rest } = (step.request ?? {}) as Record<string, Json>;
    const fields = renderJson(rest, scope) as Record<string, Json>;
    const rendered = Object.entries((headers ?? {}) as Record<string, string>).map(
      ([k, v]) => [k, typeof v === "string" ? renderHeader(v, scope) : [JSON.stringify(v)]] as const,
    );
    return { fields, headers: Object.fromEntries(rendered) };
  } catch (e) {
    if (e instanceof ExpressionError) throw new ExpressionError(`request: ${e.message}`, e.missing);
    throw e;
  }
}

export async function advanceInTx(
  tx: Tx,
  pipelineId: string,
  opts: { outcomes?: Record<string, StepOutcome>; now?: Date } = {},
): Promise<{ submitted: number; calls: number }> {
  const now = opts.now ?? new Date();
  const rows = await run(tx, LOCK_PIPELINE_TO_ADVANCE, [pipelineId]);
  const pipeline = rows[0];
  // a suspended tenant's pipelines wait where they are and go on once it is reactivated
  if (!pipeline || pipeline.status !== "running" || pipeline.tenant_status !== "active") return { submitted: 0, calls: 0 };
  const steps = await tx.pipelineStep.findMany({
    where: { pipelineId },
    orderBy: { position: "asc" },
    include: { job: { select: { status: true, error: true, exitCode: true, attempts: true } } },
  });
  await captureJobOutputs(tx, pipelineId, steps);
  const outputs = await latestOutputs(
    tx,
    pipelineId,
    steps.map((s) => s.name),
  );
  const base: Scope = { outputs, iteration: 0, pipeline: { id: pipelineId, name: pipeline.name } };
  // a dry run of tool calls' templates: secrets are the worker's to fill in, at call time
  const secretNames = new Set(
    (await tx.tenantSecret.findMany({ where: { tenantId: pipeline.tenant_id }, select: { name: true } })).map((x) => x.name),
  );
  const byName = new Map(steps.map((s) => [s.name, s]));
  const state = steps.map((s) => toState(s, opts.outcomes ?? {}));
  const stateOf = new Map(state.map((s) => [s.name, s]));
  let submitted = 0;
  let calls = 0;

  for (let round = 0; round < 5; round++) {
    const d = advance(state, { now, scope: base });
    const starting = new Set(d.submit);
    for (const u of d.updates) {
      const st = stateOf.get(u.name)!;
      Object.assign(st, { status: u.status, iteration: u.iteration, outcome: null, ...(u.error !== undefined ? { error: u.error } : {}) });
      // steps starting a run get their status together with their job or their call (a running step always has one)
      if (starting.has(u.name)) continue;
      const final = u.status === "completed" || u.status === "failed" || u.status === "cancelled" || u.status === "skipped";
      await tx.pipelineStep.update({
        where: { id: byName.get(u.name)!.id },
        data: {
          status: u.status,
          iteration: u.iteration,
          ...(u.error !== undefined ? { error: u.error } : {}),
          ...(final ? { finishedAt: now, callLeaseUntil: null, callDueAt: null } : {}),
          ...(u.status === "waiting" ? FRESH_RUN : {}),
        },
      });
    }
    for (const end of d.loopsStarted) await tx.pipelineStep.update({ where: { id: byName.get(end)!.id }, data: { loopStartedAt: now } });
    await logEvents(tx, pipelineId, d.log);

    let failed = false;
    for (const name of d.submit) {
      const step = byName.get(name)!;
      const iteration = stateOf.get(name)!.iteration;
      const scope = { ...base, iteration };
      try {
        if (step.kind === "job") {
          const { command, env } = resolveJob(step, scope);
          const job = await insertJob(
            tx,
            pipeline.tenant_id,
            {
              name: `${pipeline.name} · ${name}${stepLoop(step) ? ` #${iteration + 1}` : ""}`.slice(0, 200),
              gpu_count: step.gpuCount!,
              gpu_type: step.gpuType!,
              // an operator may have capped the tenant's priority since the pipeline was accepted
              priority: Math.max(step.priority, pipeline.max_priority),
              max_retries: step.maxRetries,
              image: step.image ?? undefined,
              command,
              env,
              duration_s: step.durationS ?? undefined,
              retry: {
                backoff_s: step.retryBackoffS,
                backoff_factor: step.retryBackoffFactor,
                max_backoff_s: step.retryBackoffMaxS,
                on_exit_codes: step.retryOn ?? undefined,
              },
            },
            "pipeline",
            { pipelineId },
          );
          await tx.pipelineStep.update({
            where: { id: step.id },
            data: { jobId: job.id, status: "running", iteration, error: null, startedAt: now, finishedAt: null },
          });
          submitted++;
        } else {
          resolveRequest(step, { ...scope, secretNames });
          await tx.pipelineStep.update({
            where: { id: step.id },
            data: {
              status: "running",
              iteration,
              error: null,
              callAttempt: 1,
              callFence: randomUUID(),
              callDueAt: now,
              callLeaseUntil: null,
              startedAt: now,
              finishedAt: null,
            },
          });
          calls++;
        }
      } catch (e) {
        if (!(e instanceof ExpressionError) && !isAppError(e)) throw e;
        // the step cannot start: it fails now, with the reason, and the next round stops the pipeline
        const why = e instanceof ExpressionError ? `could not resolve ${e.message}` : `could not be submitted: ${e.message}`;
        Object.assign(stateOf.get(name)!, { status: "running", outcome: "failed", error: why });
        failed = true;
      }
    }
    if (d.pipeline !== "running") {
      await tx.pipeline.update({ where: { id: pipelineId }, data: { status: d.pipeline, reason: d.reason, finishedAt: now } });
      break;
    }
    if (!failed) break;
  }
  return { submitted, calls };
}

/** Advances one pipeline in its own transaction, then wakes the scheduler and the tool-call workers. */
export async function advancePipeline(
  pipelineId: string,
  opts: { outcomes?: Record<string, StepOutcome> } = {},
): Promise<{ submitted: number; calls: number }> {
  const r = await db().$transaction((tx) => advanceInTx(tx, pipelineId, opts));
  await wake(r);
  return r;
}

export async function wake(r: { submitted: number; calls: number }) {
  if (r.submitted) await emitEvent("scheduler/run.requested", { reason: "pipeline step submitted" });
  if (r.calls) await emitEvent("pipelines/tool-call.requested", { reason: "tool call queued" });
}

/** The sweep: advances every running pipeline (catches whatever a finished job's own call missed). */
export async function advanceRunningPipelines(): Promise<{ pipelines: number; submitted: number; calls: number }> {
  const running = await db().pipeline.findMany({ where: { status: "running" }, select: { id: true } });
  let submitted = 0;
  let calls = 0;
  for (const p of running) {
    const r = await db().$transaction((tx) => advanceInTx(tx, p.id));
    submitted += r.submitted;
    calls += r.calls;
  }
  await wake({ submitted, calls });
  return { pipelines: running.length, submitted, calls };
}
