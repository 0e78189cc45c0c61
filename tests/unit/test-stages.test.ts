import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runStages, startable, type Stage } from "@/scripts/lib/test-stages";
import { tempDir } from "../support/temp-dir";

const stage = (name: string, extra: Partial<Stage> = {}): Stage => ({ name, command: process.execPath, args: ["-e", ""], ...extra });
const names = (xs: Stage[]) => xs.map((s) => s.name);

describe("which of npm test's stages start", () => {
  const suite = [
    stage("typecheck"),
    stage("unit"),
    stage("lint", { after: ["typecheck"] }),
    stage("build", { after: ["lint"] }),
    stage("integration", { after: ["unit"] }),
    stage("bench smoke", { needs: ["build"] }),
    stage("e2e", { needs: ["build"], after: ["integration", "bench smoke"], alone: true }),
  ];

  it("two at a time, in the order given, each after what it comes after", () => {
    expect(names(startable(suite, { running: new Set(), ended: new Map(), lanes: 2 }).start)).toEqual(["typecheck", "unit"]);
    expect(names(startable(suite, { running: new Set(["unit"]), ended: new Map([["typecheck", false]]), lanes: 2 }).start)).toEqual([
      "lint",
    ]);
    // a failed check does not hold back what only comes after it
    expect(
      names(
        startable(suite, {
          running: new Set(["integration"]),
          ended: new Map([
            ["typecheck", false],
            ["unit", true],
            ["lint", true],
          ]),
          lanes: 2,
        }).start,
      ),
    ).toEqual(["build"]);
  });

  it("does not run a stage whose need failed, and says which", () => {
    const ended = new Map([
      ["typecheck", true],
      ["unit", true],
      ["lint", true],
      ["build", false],
      ["integration", true],
    ]);
    const { start, skip } = startable(suite, { running: new Set(), ended, lanes: 2 });
    expect(start).toEqual([]);
    expect(skip.map((x) => [x.stage.name, x.because])).toEqual([
      ["bench smoke", "build"],
      ["e2e", "build"],
    ]);
  });

  it("starts a stage that wants the machine alone only when nothing runs, and nothing beside it", () => {
    const all = new Map(["typecheck", "unit", "lint", "build", "integration", "bench smoke"].map((n) => [n, true]));
    expect(names(startable(suite, { running: new Set(), ended: all, lanes: 2 }).start)).toEqual(["e2e"]);
    const withLater = [...suite, stage("after all")];
    expect(names(startable(withLater, { running: new Set(["e2e"]), ended: all, lanes: 2 }).start)).toEqual([]);
    const almost = new Map(all);
    almost.delete("bench smoke");
    expect(names(startable(suite, { running: new Set(["bench smoke"]), ended: almost, lanes: 2 }).start)).toEqual([]);
  });
});

describe("running npm test's stages", () => {
  it("keeps each stage's output in its own file, prints it whole when the stage ends, and counts outcomes", async () => {
    const dir = tempDir("gpuforge-stages-");
    const printed: string[] = [];
    const run = await runStages(
      [
        stage("first", { args: ["-e", "console.log('one'); console.error('two')"] }),
        stage("fails", { args: ["-e", "console.log('bad'); process.exit(3)"] }),
        stage("counted", {
          args: ["-e", "console.log('x')"],
          count: () => ({ passed: 4, failed: 1, problems: [], lines: ["[counted] 4 passed"] }),
        }),
        stage("needs the failure", { needs: ["fails"] }),
      ],
      { env: process.env, logDir: dir, lanes: 2, print: (t) => printed.push(t) },
    );
    expect(readFileSync(path.join(dir, "first.log"), "utf8")).toBe("one\ntwo\n");
    const out = printed.join("");
    expect(out).toMatch(/━━ first ━━[^\n]*\none\ntwo\n━━ first: ok in/);
    expect(out).toContain("━━ fails: FAILED");
    expect(out).toContain("[counted] 4 passed");
    expect(run.passed).toBe(4);
    expect(run.failed).toBe(1);
    expect(run.problems).toEqual(["fails (exit 3)", "needs the failure (not run: fails failed)"]);
    expect(run.timings.map((t) => [t.name, t.outcome])).toEqual([
      ["first", "ok"],
      ["fails", "FAILED"],
      ["counted", "FAILED"],
      ["needs the failure", "not run"],
    ]);
  });
});
