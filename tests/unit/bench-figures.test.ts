import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { benchReportIn, figureProblems } from "@/scripts/lib/bench-figures";

describe("a benchmark's figures", () => {
  it("are complete when every leaf is a finite number, nested objects and lists included", () => {
    expect(figureProblems({ cycle_ms: 12.5, profile: { read_ms: 3, by: { a: 0 } }, growth: [{ m: 1 }, { m: 4 }], cores: 2 })).toEqual([]);
  });

  it("name each figure that is missing, null, NaN, infinite, a string, a boolean or empty", () => {
    expect(
      figureProblems({
        a: undefined,
        b: null,
        c: Number.NaN,
        d: Number.POSITIVE_INFINITY,
        e: "fast",
        f: true,
        g: {},
        h: [],
        i: { deep: [1, null] },
      }),
    ).toEqual([
      "a: missing is not a number",
      "b: null is not a number",
      "c: NaN is not a finite number",
      "d: Infinity is not a finite number",
      'e: "fast" is not a number',
      "f: true is not a number",
      "g: an empty object",
      "h: an empty list",
      "i.deep[1]: null is not a number",
    ]);
    expect(figureProblems({})).toEqual(["(the report): an empty object"]);
  });

  it("finds the report at the end of what the benchmark printed, after a build's output", () => {
    const printed = ["▲ Next.js 16", "{ not json", "  Compiled", JSON.stringify({ x: 1, y: { z: [2] } }, null, 2), ""].join("\n");
    expect(benchReportIn(printed)).toEqual({ x: 1, y: { z: [2] } });
    // one line, too
    expect(benchReportIn('log line\n{"a":1}\n')).toEqual({ a: 1 });
  });

  it("says so when the output ends without one", () => {
    expect(() => benchReportIn("")).toThrow(/no JSON report/);
    expect(() => benchReportIn('{"a": 1}\nDone in 3 s\n')).toThrow(/no JSON report/);
    expect(() => benchReportIn("[1, 2]\n")).toThrow(/no JSON report/);
  });
});

// The harness's own files open database connections and child processes only through
// scripts/lib/harness-clients, which gives each an error listener from birth (issue 33): one that
// is opened bare shows up here with its file and line.
describe("the harness's connections and child processes", () => {
  const roots = ["bench", "scripts", "tests/support"];
  const files = roots.flatMap(function walk(dir: string): string[] {
    return readdirSync(dir).flatMap((f) => {
      const p = path.join(dir, f);
      return statSync(p).isDirectory() ? walk(p) : /\.(ts|mjs)$/.test(f) ? [p] : [];
    });
  });
  const bare = /new pg\.(Client|Pool)\(|\bspawn\(/;

  it("are opened with an error listener", () => {
    const found = files
      .filter((f) => f !== path.join("scripts", "lib", "harness-clients.ts"))
      .flatMap((f) => {
        const lines = readFileSync(f, "utf8").split("\n");
        // the docker stand-in is a command of its own, without the harness: its one child has its listener on the next line
        return lines.flatMap((line, i) =>
          bare.test(line) && !(lines[i + 1] ?? "").includes('.on("error"') ? [`${f}:${i + 1}: ${line.trim()}`] : [],
        );
      });
    expect(found).toEqual([]);
  });
});
