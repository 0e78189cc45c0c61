import { describe, expect, it } from "vitest";
import { advance, depths, type StepState } from "@/lib/pipelines/dag";
import { validateDag } from "@/lib/pipelines/validate-dag";

const FINAL = ["completed", "failed", "cancelled"] as const;
const st = (
  name: string,
  dependsOn: string[] = [],
  status: StepState["status"] = "waiting",
  jobStatus: string | null = null,
  repeat = 1,
  iteration = 0,
): StepState => ({
  name,
  dependsOn,
  status,
  iteration,
  outcome: FINAL.find((f) => f === jobStatus) ?? null,
  loop: repeat > 1 ? { from: name, until: null, max: repeat, timeoutS: null, onExhausted: "continue" } : null,
});

describe("pipeline DAG validation", () => {
  it("accepts fan-out and fan-in", () => {
    expect(
      validateDag([
        { name: "prep" },
        { name: "a", depends_on: ["prep"] },
        { name: "b", depends_on: ["prep"] },
        { name: "merge", depends_on: ["a", "b"] },
      ]),
    ).toEqual([]);
  });
  it("names unknown dependencies, duplicates and self-dependencies by field", () => {
    expect(validateDag([{ name: "a", depends_on: ["ghost"] }])).toEqual([
      { path: "steps[0].depends_on[0]", message: "No step named “ghost”" },
    ]);
    expect(validateDag([{ name: "a" }, { name: "a" }])[0]!.path).toBe("steps[1].name");
    expect(validateDag([{ name: "a", depends_on: ["a"] }])[0]!.message).toMatch(/itself/);
  });
  it("finds cycles and shows them", () => {
    const issues = validateDag([
      { name: "a", depends_on: ["c"] },
      { name: "b", depends_on: ["a"] },
      { name: "c", depends_on: ["b"] },
    ]);
    expect(issues).toHaveLength(1);
    expect(issues[0]!.message).toMatch(/cycle: a → c → b → a|cycle: .* → .* → .* → /);
  });
  it("computes depths for drawing", () => {
    const d = depths([{ name: "prep" }, { name: "a", depends_on: ["prep"] }, { name: "merge", depends_on: ["a", "prep"] }]);
    expect(Object.fromEntries(d)).toEqual({ prep: 0, a: 1, merge: 2 });
  });
});

describe("pipeline advance", () => {
  it("starts the roots, then fans out, then fans in, then completes", () => {
    let steps = [st("prep"), st("a", ["prep"]), st("b", ["prep"]), st("merge", ["a", "b"])];
    let r = advance(steps);
    expect(r.submit).toEqual(["prep"]);
    steps = [st("prep", [], "running", "completed"), st("a", ["prep"]), st("b", ["prep"]), st("merge", ["a", "b"])];
    r = advance(steps);
    expect(r.submit.sort()).toEqual(["a", "b"]);
    steps = [
      st("prep", [], "completed"),
      st("a", ["prep"], "running", "completed"),
      st("b", ["prep"], "running", "running"),
      st("merge", ["a", "b"]),
    ];
    expect(advance(steps).submit).toEqual([]);
    steps = [
      st("prep", [], "completed"),
      st("a", ["prep"], "completed"),
      st("b", ["prep"], "running", "completed"),
      st("merge", ["a", "b"]),
    ];
    expect(advance(steps).submit).toEqual(["merge"]);
    steps = [
      st("prep", [], "completed"),
      st("a", ["prep"], "completed"),
      st("b", ["prep"], "completed"),
      st("merge", ["a", "b"], "running", "completed"),
    ];
    expect(advance(steps).pipeline).toBe("completed");
  });
  it("repeats a step a bounded number of times before its dependents start", () => {
    let r = advance([st("train", [], "running", "completed", 3, 0), st("eval", ["train"])]);
    expect(r.submit).toEqual(["train"]);
    expect(r.updates).toContainEqual({ name: "train", status: "running", iteration: 1 });
    r = advance([st("train", [], "running", "completed", 3, 2), st("eval", ["train"])]);
    expect(r.updates).toContainEqual({ name: "train", status: "completed", iteration: 3 });
    expect(r.submit).toEqual(["eval"]);
  });
  it("a failed step fails the pipeline and skips what has not started", () => {
    const r = advance([st("a", [], "running", "failed"), st("b", ["a"]), st("c"), st("d", [], "running", "running")]);
    expect(r.pipeline).toBe("failed");
    expect(r.submit).toEqual([]);
    expect(r.updates).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "a", status: "failed", iteration: 0 }),
        { name: "b", status: "skipped", iteration: 0 },
        { name: "c", status: "skipped", iteration: 0 },
      ]),
    );
    expect(r.updates.find((u) => u.name === "d")).toBeUndefined(); // already running: it finishes
  });
});
