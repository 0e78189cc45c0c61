import type { FieldIssue } from "@/lib/errors";

// Pipelines as pure logic: validating the DAG and deciding, from the steps' states, what happens
// next. lib/pipelines/advance-pipeline.ts applies the decisions in one transaction.
//
// A step runs (as a job) once every step it depends on completed: fan-out is several steps
// depending on one, fan-in one step depending on several. `repeat: n` runs a step n times in a row
// (a bounded loop); its dependents wait for the last run. A step whose job fails for good (retries
// spent) or is cancelled fails the pipeline: steps not yet started are cancelled, steps already
// running finish.

export interface StepSpec {
  name: string;
  depends_on?: string[];
}

export function validateDag(steps: StepSpec[]): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const index = new Map<string, number>();
  steps.forEach((s, i) => {
    if (index.has(s.name)) issues.push({ path: `steps[${i}].name`, message: `Duplicate of steps[${index.get(s.name)}].name` });
    else index.set(s.name, i);
  });
  steps.forEach((s, i) =>
    (s.depends_on ?? []).forEach((d, j) => {
      if (d === s.name) issues.push({ path: `steps[${i}].depends_on[${j}]`, message: "A step cannot depend on itself" });
      else if (!index.has(d)) issues.push({ path: `steps[${i}].depends_on[${j}]`, message: `No step named “${d}”` });
    }),
  );
  if (issues.length) return issues;
  const cycle = findCycle(steps);
  if (cycle) {
    const i = index.get(cycle[0]!)!;
    issues.push({ path: `steps[${i}].depends_on`, message: `Dependency cycle: ${cycle.join(" → ")}` });
  }
  return issues;
}

function findCycle(steps: StepSpec[]): string[] | null {
  const deps = new Map(steps.map((s) => [s.name, s.depends_on ?? []]));
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const visit = (name: string): string[] | null => {
    if (state.get(name) === "done") return null;
    if (state.get(name) === "visiting") return [...stack.slice(stack.indexOf(name)), name];
    state.set(name, "visiting");
    stack.push(name);
    for (const d of deps.get(name) ?? []) {
      const c = visit(d);
      if (c) return c;
    }
    stack.pop();
    state.set(name, "done");
    return null;
  };
  for (const s of steps) {
    const c = visit(s.name);
    if (c) return c;
  }
  return null;
}

export type StepStatus = "waiting" | "running" | "completed" | "failed" | "cancelled";

export interface StepState {
  name: string;
  dependsOn: string[];
  status: StepStatus;
  repeat: number;
  iteration: number;
  /** the status of the step's current job, when it has one */
  jobStatus: string | null;
}

export interface Advance {
  /** new status (and iteration) per step that changed */
  updates: Array<{ name: string; status: StepStatus; iteration: number }>;
  /** steps whose next job must be submitted now */
  submit: string[];
  pipeline: "running" | "completed" | "failed" | "cancelled";
  log: Array<{ step: string | null; message: string }>;
}

export function advance(steps: StepState[], current: "running" | "completed" | "failed" | "cancelled" = "running"): Advance {
  const s = new Map(steps.map((x) => [x.name, { ...x }]));
  const out: Advance = { updates: [], submit: [], pipeline: current, log: [] };
  const set = (name: string, status: StepStatus, iteration: number) => {
    const st = s.get(name)!;
    st.status = status;
    st.iteration = iteration;
    out.updates = out.updates.filter((u) => u.name !== name);
    out.updates.push({ name, status, iteration });
  };

  // 1. running steps whose job ended
  for (const st of s.values()) {
    if (st.status !== "running") continue;
    if (st.jobStatus === "completed") {
      const done = st.iteration + 1;
      if (done < st.repeat) {
        set(st.name, "running", done);
        out.submit.push(st.name);
        out.log.push({ step: st.name, message: `run ${done} of ${st.repeat} completed; starting run ${done + 1}` });
      } else {
        set(st.name, "completed", done);
        out.log.push({ step: st.name, message: st.repeat > 1 ? `all ${st.repeat} runs completed` : "completed" });
      }
    } else if (st.jobStatus === "failed" || st.jobStatus === "cancelled") {
      set(st.name, st.jobStatus === "failed" ? "failed" : "cancelled", st.iteration);
      out.log.push({ step: st.name, message: st.jobStatus === "failed" ? "failed (retries spent)" : "its job was cancelled" });
    }
  }

  // 2. a failure stops the pipeline: nothing new starts
  const broken = [...s.values()].find((x) => x.status === "failed" || x.status === "cancelled");
  if (broken && out.pipeline === "running") {
    out.pipeline = broken.status === "failed" ? "failed" : "cancelled";
    out.log.push({ step: broken.name, message: `pipeline ${out.pipeline}: steps not yet started are cancelled` });
  }
  if (out.pipeline !== "running") {
    for (const st of s.values()) {
      if (st.status === "waiting") {
        set(st.name, "cancelled", st.iteration);
        out.log.push({ step: st.name, message: "cancelled: an upstream step did not succeed" });
      }
    }
    return out;
  }

  // 3. steps whose dependencies all completed start now
  for (const st of s.values()) {
    if (st.status === "waiting" && st.dependsOn.every((d) => s.get(d)?.status === "completed")) {
      set(st.name, "running", st.iteration);
      out.submit.push(st.name);
      out.log.push({ step: st.name, message: st.dependsOn.length ? `started after ${st.dependsOn.join(", ")}` : "started" });
    }
  }

  if ([...s.values()].every((x) => x.status === "completed")) {
    out.pipeline = "completed";
    out.log.push({ step: null, message: "pipeline completed" });
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
