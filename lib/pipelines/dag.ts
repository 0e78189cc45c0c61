import { evaluateCondition, ExpressionError, type Scope } from "./expressions";
import { loopDecision } from "./loop";
import type { StepKind } from "./schemas";
import { ancestors, loopBody, type Loop } from "./spec";
import type { StepSpec } from "./validate-dag";

// Pipelines as pure logic: deciding, from the steps' states, what happens next (validate-dag.ts
// checks the graph's shape). lib/pipelines/advance-pipeline.ts applies the decisions in one transaction.
//
// A step runs (as a job) once every step it depends on completed: fan-out is several steps
// depending on one, fan-in one step depending on several. `repeat: n` runs a step n times in a row
// (a bounded loop); `repeat: {until, max, from}` runs the steps from `from` to this one again until
// the condition over the latest outputs holds (lib/pipelines/loop.ts decides). Dependents wait for
// the loop's end. A step that fails for good (retries spent) or is cancelled fails the pipeline:
// steps not yet started are skipped, steps already running finish.

type StepStatus = "waiting" | "running" | "completed" | "failed" | "cancelled" | "skipped";
type PipelineStatus = "running" | "completed" | "failed" | "cancelled";
export type Outcome = "completed" | "failed" | "cancelled";

export interface StepState {
  name: string;
  dependsOn: string[];
  kind?: StepKind;
  status: StepStatus;
  /** the loop iteration it is in (its loop's last step: iterations completed, once the loop is over) */
  iteration: number;
  /** how its current execution ended, not yet applied: its job's final status, or a tool call's */
  outcome: Outcome | null;
  /** why that execution failed */
  error?: string | null;
  /** set on a loop's last step */
  loop?: Loop | null;
  loopStartedAt?: Date | null;
}

export interface AdvanceContext {
  now: Date;
  /** what loop conditions read: each step's latest output */
  scope: Scope;
}

export interface LogEntry {
  step: string | null;
  message: string;
  kind: "transition" | "iteration";
  iteration?: number;
  details?: Record<string, unknown>;
}

export interface Advance {
  /** new status (and iteration) per step that changed */
  updates: Array<{ name: string; status: StepStatus; iteration: number; error?: string | null }>;
  /** steps whose execution must start now (a job submitted, a tool call queued) */
  submit: string[];
  /** loops (by their last step) whose wall clock starts now */
  loopsStarted: string[];
  pipeline: PipelineStatus;
  reason: string | null;
  log: LogEntry[];
}

const JOB_FAILURE = "failed (retries spent)";

export function advance(
  steps: StepState[],
  ctx: AdvanceContext = { now: new Date(0), scope: { outputs: {}, iteration: 0, pipeline: { id: "", name: "" } } },
): Advance {
  const s = new Map(steps.map((x) => [x.name, { ...x }]));
  const out: Advance = { updates: [], submit: [], loopsStarted: [], pipeline: "running", reason: null, log: [] };
  const set = (name: string, status: StepStatus, iteration: number, error?: string | null) => {
    const st = s.get(name)!;
    st.status = status;
    st.iteration = iteration;
    st.outcome = null;
    out.updates = out.updates.filter((u) => u.name !== name);
    out.updates.push({ name, status, iteration, ...(error !== undefined ? { error } : {}) });
  };
  const log = (step: string | null, message: string, extra: Partial<LogEntry> = {}) =>
    out.log.push({ step, message, kind: "transition", ...extra });
  const anc = ancestors(steps.map((x) => ({ name: x.name, depends_on: x.dependsOn })));

  // 1. running steps whose execution ended
  for (const st of s.values()) {
    if (st.status !== "running" || !st.outcome) continue;
    if (st.outcome === "failed" || st.outcome === "cancelled") {
      const why = st.error ?? (st.outcome === "failed" ? JOB_FAILURE : "its job was cancelled");
      set(st.name, st.outcome, st.iteration, why);
      log(st.name, st.outcome === "failed" ? (st.error ? `failed: ${st.error}` : JOB_FAILURE) : "its job was cancelled", {
        iteration: st.iteration,
      });
      continue;
    }
    const loop = st.loop;
    if (!loop) {
      set(st.name, "completed", st.iteration);
      log(st.name, "completed", { iteration: st.iteration });
      continue;
    }
    const iteration = st.iteration;
    const runs = iteration + 1;
    let condition: boolean | undefined;
    if (loop.until) {
      try {
        condition = evaluateCondition(loop.until, { ...ctx.scope, iteration });
      } catch (e) {
        if (!(e instanceof ExpressionError)) throw e;
        set(st.name, "failed", iteration, `loop condition: ${e.message}`);
        log(st.name, `failed: loop condition: ${e.message}`, { iteration });
        continue;
      }
    }
    const elapsedMs = ctx.now.getTime() - (st.loopStartedAt ?? ctx.now).getTime();
    const d = loopDecision({ runs, max: loop.max, conditional: Boolean(loop.until), condition, elapsedMs, timeoutS: loop.timeoutS });
    const details = { iteration, max: loop.max, ...(loop.until ? { until: loop.until, condition } : {}) };
    if (d.kind === "again") {
      for (const b of loopBody(loop.from, st.name, anc)) set(b, "waiting", runs);
      log(
        st.name,
        loop.until
          ? `iteration ${runs} of at most ${loop.max}: “${loop.until}” is false; starting iteration ${runs + 1}`
          : `run ${runs} of ${loop.max} completed; starting run ${runs + 1}`,
        { kind: "iteration", iteration, details },
      );
    } else if (d.kind === "done" || loop.onExhausted === "continue") {
      set(st.name, "completed", runs);
      log(st.name, loop.until ? `loop done: ${d.reason}` : `all ${loop.max} runs completed`, {
        kind: "iteration",
        iteration,
        details: { ...details, outcome: d.kind },
      });
    } else {
      set(st.name, "failed", iteration, `loop gave up: ${d.reason}`);
      log(st.name, `failed: loop gave up: ${d.reason}`, { kind: "iteration", iteration, details: { ...details, outcome: d.kind } });
    }
  }

  // 2. a failure stops the pipeline: nothing new starts, what runs finishes
  const broken = [...s.values()].find((x) => x.status === "failed" || x.status === "cancelled");
  if (broken) {
    out.pipeline = broken.status === "failed" ? "failed" : "cancelled";
    out.reason = `step “${broken.name}” ${broken.status === "failed" ? "failed" : "was cancelled"}`;
    log(broken.name, `pipeline ${out.pipeline}: steps not yet started are skipped`);
    for (const st of s.values()) {
      if (st.status === "waiting") {
        set(st.name, "skipped", st.iteration);
        log(st.name, "skipped: an upstream step did not succeed");
      }
    }
    return out;
  }

  // 3. steps whose dependencies all completed start now
  const loopStarts = new Map([...s.values()].flatMap((x) => (x.loop ? [[x.loop.from, x] as const] : [])));
  for (const st of s.values()) {
    if (st.status === "waiting" && st.dependsOn.every((d) => s.get(d)?.status === "completed")) {
      set(st.name, "running", st.iteration);
      out.submit.push(st.name);
      log(st.name, st.dependsOn.length ? `started after ${st.dependsOn.join(", ")}` : "started", { iteration: st.iteration });
      const loopEnd = loopStarts.get(st.name);
      if (loopEnd && !loopEnd.loopStartedAt && st.iteration === 0) out.loopsStarted.push(loopEnd.name);
    }
  }

  if ([...s.values()].every((x) => x.status === "completed")) {
    out.pipeline = "completed";
    log(null, "pipeline completed");
  }
  return out;
}

/** Depth of each step (0 for roots), for drawing the graph in columns. */
export function depths(steps: StepSpec[]): Map<string, number> {
  const deps = new Map(steps.map((s) => [s.name, s.depends_on ?? []]));
  const memo = new Map<string, number>();
  const depth = (n: string): number => {
    if (memo.has(n)) return memo.get(n)!;
    const d = Math.max(-1, ...(deps.get(n) ?? []).map(depth)) + 1;
    memo.set(n, d);
    return d;
  };
  for (const s of steps) depth(s.name);
  return memo;
}
