// What `npm test` says of a vitest project's JSON report (--reporter=json): the counts, and each
// failed test by file, name and the first line of its failure, and each file that failed outside
// its tests (a hook or its import: vitest then marks its tests skipped). CI shows only the end of a
// run's output, where the stages' own logs have long scrolled by: the failures are repeated there.

export interface VitestReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTotalTests: number;
  testResults?: Array<{
    name: string;
    /** "failed" also when no test did: a hook (beforeAll) or the file's import threw */
    status?: string;
    /** that failure's message */
    message?: string;
    assertionResults?: Array<{ fullName?: string; title?: string; status: string; failureMessages?: string[] }>;
  }>;
}

/**
 * Each failed test as `file > name: first line of the failure`, and each file that failed outside its
 * tests as `file: first line of the failure (… N tests did not run)`, at most `max` of them, then how many more.
 */
export function failedTestsIn(report: VitestReport, root: string, max = 10): string[] {
  const failed = (report.testResults ?? []).flatMap((file) => {
    const where = file.name.startsWith(`${root}/`) ? file.name.slice(root.length + 1) : file.name;
    const tests = file.assertionResults ?? [];
    const fileFailure =
      file.status === "failed" && file.message
        ? [
            `${where}: ${firstLine(file.message)} (a hook or the file's import; ${tests.filter((a) => a.status === "skipped").length} tests did not run)`,
          ]
        : [];
    return [
      ...fileFailure,
      ...tests
        .filter((a) => a.status === "failed")
        .map((a) => {
          const message = a.failureMessages?.[0] ?? "";
          const lines = message.split("\n").map((l) => l.trim());
          // the first line that says something: vitest's messages start with the error's name and text
          const why = firstLine(message);
          // and the line of the test file it failed on, from the first stack frame in that file
          const line = lines.map((l) => (l.startsWith("at ") ? lineIn(l, file.name) : null)).find((n) => n !== null);
          return `${where}${line ? `:${line}` : ""} > ${a.fullName ?? a.title ?? "(unnamed)"}${why ? `: ${why}` : ""}`;
        }),
    ];
  });
  return failed.length > max ? [...failed.slice(0, max), `… and ${failed.length - max} more failed`] : failed;
}

const firstLine = (message: string) => (message.split("\n").find((l) => l.trim().length > 0) ?? "").trim().slice(0, 300);

/** The line number in a stack frame ("at f (/repo/x.test.ts:108:31)" or "at /repo/x.test.ts:108:31") when it is in `file`. */
function lineIn(frame: string, file: string): string | null {
  const at = frame.indexOf(`${file}:`);
  if (at < 0) return null;
  return /^(\d+)/.exec(frame.slice(at + file.length + 1))?.[1] ?? null;
}
