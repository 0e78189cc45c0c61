import type { z } from "zod";
import { oneOf } from "@/lib/vocabulary";
import type { Json } from "./expressions";
import type { pipelineEventJsonSchema, pipelineJsonSchema } from "./schemas";
import type { Loop } from "./spec";
import { PIPELINE_EVENT_KINDS, PIPELINE_STATUSES, STEP_KINDS, STEP_STATUSES } from "./schemas";

// How pipelines, their steps and their log read in the API (and the pages): one shape.

export const pipelineInclude = { steps: { orderBy: { position: "asc" as const } } } as const;

export interface StepRow {
  name: string;
  kind: string;
  dependsOn: string[];
  status: string;
  jobId: string | null;
  iteration: number;
  repeat: number;
  loopFrom: string | null;
  loopUntil: string | null;
  loopTimeoutS: number | null;
  loopOnExhausted: string | null;
  loopStartedAt: Date | null;
  callAttempt: number;
  error: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** A step row's loop: its columns, or (rows from before conditional loops) `repeat: n` on itself. */
export function stepLoop(r: Pick<StepRow, "name" | "repeat" | "loopFrom" | "loopUntil" | "loopTimeoutS" | "loopOnExhausted">): Loop | null {
  if (r.loopFrom)
    return {
      from: r.loopFrom,
      until: r.loopUntil,
      max: r.repeat,
      timeoutS: r.loopTimeoutS,
      onExhausted: r.loopOnExhausted === "fail" ? "fail" : "continue",
    };
  return r.repeat > 1 ? { from: r.name, until: null, max: r.repeat, timeoutS: null, onExhausted: "continue" } : null;
}

export function pipelineJson(
  p: {
    id: string;
    tenantId: string;
    name: string;
    status: string;
    reason?: string | null;
    deadlineAt?: Date | null;
    createdAt: Date;
    finishedAt: Date | null;
    steps: StepRow[];
  },
  outputs: Record<string, Json | undefined> = {},
): z.infer<typeof pipelineJsonSchema> {
  return {
    id: p.id,
    tenant_id: p.tenantId,
    name: p.name,
    status: oneOf(PIPELINE_STATUSES, p.status, "pipelines.status"),
    reason: p.reason ?? null,
    deadline_at: p.deadlineAt?.toISOString() ?? null,
    steps: p.steps.map((s) => {
      const loop = stepLoop(s);
      return {
        name: s.name,
        kind: oneOf(STEP_KINDS, s.kind, "pipeline_steps.kind"),
        depends_on: s.dependsOn,
        status: oneOf(STEP_STATUSES, s.status, "pipeline_steps.status"),
        job_id: s.jobId,
        iteration: s.iteration,
        repeat: s.repeat,
        loop: loop
          ? {
              from: loop.from,
              until: loop.until,
              max: loop.max,
              timeout_s: loop.timeoutS,
              on_exhausted: loop.onExhausted,
              started_at: s.loopStartedAt?.toISOString() ?? null,
            }
          : null,
        call_attempt: s.callAttempt,
        error: s.error,
        output: outputs[s.name] ?? null,
        started_at: s.startedAt?.toISOString() ?? null,
        finished_at: s.finishedAt?.toISOString() ?? null,
      };
    }),
    created_at: p.createdAt.toISOString(),
    finished_at: p.finishedAt?.toISOString() ?? null,
  };
}

export function pipelineEventJson(e: {
  id: bigint;
  kind: string;
  step: string | null;
  iteration: number | null;
  message: string;
  details: unknown;
  createdAt: Date;
}): z.infer<typeof pipelineEventJsonSchema> {
  return {
    id: e.id.toString(),
    kind: oneOf(PIPELINE_EVENT_KINDS, e.kind, "pipeline_events.kind"),
    step: e.step,
    iteration: e.iteration,
    message: e.message,
    details: (e.details as Record<string, unknown> | null) ?? null,
    created_at: e.createdAt.toISOString(),
  };
}
