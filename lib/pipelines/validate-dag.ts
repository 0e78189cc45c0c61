import type { FieldIssue } from "@/lib/errors";

// The shape check of a pipeline's graph, pure and on its own so the spec checks (spec.ts) and the
// runner (dag.ts) both use it without importing each other: names unique, dependencies named, no cycle.

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
