import { describe, expect, it } from "vitest";
import { failedTestsIn, type VitestReport } from "@/scripts/lib/vitest-report";

const report = (results: VitestReport["testResults"]): VitestReport => ({
  numPassedTests: 0,
  numFailedTests: 0,
  numPendingTests: 0,
  numTotalTests: 0,
  testResults: results,
});

describe("the failed tests npm test repeats at its end", () => {
  it("names each failed test by file and name with the first line of its failure, and only the failed ones", () => {
    const r = report([
      {
        name: "/repo/tests/integration/a.test.ts",
        assertionResults: [
          { fullName: "a > passes", status: "passed", failureMessages: [] },
          {
            fullName: "a > breaks",
            status: "failed",
            failureMessages: ["\n  AssertionError: expected false to be true\n    at a.test.ts:9"],
          },
        ],
      },
      { name: "/elsewhere/b.test.ts", assertionResults: [{ title: "times out", status: "failed" }] },
    ]);
    expect(failedTestsIn(r, "/repo")).toEqual([
      "tests/integration/a.test.ts > a > breaks: AssertionError: expected false to be true",
      "/elsewhere/b.test.ts > times out",
    ]);
  });

  it("says the line of the test file it failed on, from the first stack frame in that file", () => {
    const file = "/repo/tests/integration/a.test.ts";
    const failure = [
      "AssertionError: expected false to be true // Object.is equality",
      "    at Object.check (/repo/tests/support/helper.ts:12:5)",
      `    at ${file}:108:31`,
      `    at run (${file}:90:3)`,
    ].join("\n");
    const r = report([{ name: file, assertionResults: [{ fullName: "a > breaks", status: "failed", failureMessages: [failure] }] }]);
    expect(failedTestsIn(r, "/repo")).toEqual([
      "tests/integration/a.test.ts:108 > a > breaks: AssertionError: expected false to be true // Object.is equality",
    ]);
  });

  it("names a file that failed outside its tests, a beforeAll or an afterAll, and how many of its tests did not run", () => {
    const r = report([
      {
        name: "/repo/tests/e2e/a.test.ts",
        status: "failed",
        message: "\nTypeError: fetch failed\n    at /repo/tests/e2e/a.test.ts:3:1",
        assertionResults: [
          { fullName: "a > one", status: "skipped" },
          { fullName: "a > two", status: "skipped" },
        ],
      },
      {
        name: "/repo/tests/e2e/b.test.ts",
        status: "failed",
        message: "after boom",
        assertionResults: [{ fullName: "b > x", status: "failed" }],
      },
      { name: "/repo/tests/e2e/c.test.ts", status: "passed", message: "", assertionResults: [{ fullName: "c > x", status: "passed" }] },
    ]);
    expect(failedTestsIn(r, "/repo")).toEqual([
      "tests/e2e/a.test.ts: TypeError: fetch failed (a hook or the file's import; 2 tests did not run)",
      "tests/e2e/b.test.ts: after boom (a hook or the file's import; 0 tests did not run)",
      "tests/e2e/b.test.ts > b > x",
    ]);
  });

  it("stops at the cap and says how many more failed", () => {
    const many = Array.from({ length: 13 }, (_, i) => ({ fullName: `t${i}`, status: "failed" }));
    const out = failedTestsIn(report([{ name: "/repo/x.test.ts", assertionResults: many }]), "/repo", 10);
    expect(out).toHaveLength(11);
    expect(out[9]).toBe("x.test.ts > t9");
    expect(out[10]).toBe("… and 3 more failed");
  });

  it("says nothing for a report without failures or without results", () => {
    expect(failedTestsIn(report([{ name: "/repo/x.test.ts", assertionResults: [{ fullName: "ok", status: "passed" }] }]), "/repo")).toEqual(
      [],
    );
    expect(failedTestsIn(report(undefined), "/repo")).toEqual([]);
  });
});
