// npm test's bench smoke stage (scripts/test.ts): every `bench:*` script of package.json at its
// smoke size (BENCH_SMOKE=1: seconds), one after another. A benchmark passes when it exits 0 and
// its output ends with its JSON report, every figure present and a finite number; no figure is
// compared with anything (these machines are shared: thresholds belong in docs/performance.md,
// never in a test). Each benchmark's output goes to test-results/bench-smoke/NAME.out and .err;
// the summary, one line per benchmark and a JSON file, says which failed and why.
//
// `tsx scripts/bench-smoke.ts [--summary FILE] [NAME…]`. With TEST_DATABASE_SERVER_URL (or
// DATABASE_URL), the benchmarks make their databases on that server instead of each starting one.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { benchReportIn, figureProblems } from "./lib/bench-figures";
import { repoRoot } from "./lib/database-url";
import { withDatabase } from "./lib/embedded-db";
import { runLogged } from "./lib/run-logged";

/** A smoke run that takes longer than this has stopped being a smoke run (or hangs). */
const LIMIT_S = 300;

export interface SmokeResult {
  bench: string;
  ok: boolean;
  seconds: number;
  /** why it failed: its exit, or the figures that are not there */
  problems: string[];
}

const { values, positionals } = parseArgs({ options: { summary: { type: "string" } }, allowPositionals: true });
const scripts = Object.keys(
  (JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts,
)
  .filter((s) => s.startsWith("bench:"))
  .map((s) => s.slice("bench:".length))
  .filter((s) => positionals.length === 0 || positionals.includes(s));
const outDir = path.join(repoRoot, "test-results", "bench-smoke");
mkdirSync(outDir, { recursive: true });
const server =
  process.env.TEST_DATABASE_SERVER_URL ?? (process.env.DATABASE_URL ? withDatabase(process.env.DATABASE_URL, "postgres") : undefined);

const results: SmokeResult[] = [];
for (const bench of scripts) {
  const started = Date.now();
  const run = await runLogged({
    label: `bench:${bench}`,
    command: "npm",
    args: ["run", "-s", `bench:${bench}`],
    env: { ...process.env, BENCH_SMOKE: "1", NEXT_TELEMETRY_DISABLED: "1", ...(server ? { DATABASE_URL: server } : {}) },
    stdoutFile: path.join(outDir, `${bench}.out`),
    stderrFile: path.join(outDir, `${bench}.err`),
    timeoutMs: LIMIT_S * 1000,
  });
  const problems: string[] = [];
  if (run.timedOut) problems.push(`did not finish within ${LIMIT_S} s`);
  else if (run.code !== 0) problems.push(`exited ${run.code ?? run.signal}: ${run.stderrTail || "(nothing on stderr)"}`);
  if (problems.length === 0) {
    try {
      problems.push(...figureProblems(benchReportIn(readFileSync(path.join(outDir, `${bench}.out`), "utf8"))));
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  const result = { bench, ok: problems.length === 0, seconds: Math.round((Date.now() - started) / 100) / 10, problems };
  results.push(result);
  console.log(
    `[bench smoke] bench:${bench}: ${result.ok ? "ok" : "FAILED"} in ${result.seconds} s${result.ok ? "" : `\n  ${problems.join("\n  ")}`}`,
  );
}
if (values.summary) writeFileSync(values.summary, `${JSON.stringify(results, null, 2)}\n`);
const failed = results.filter((r) => !r.ok).length;
console.log(`[bench smoke] ${results.length - failed} of ${results.length} benchmarks ran to completion with every figure`);
process.exit(failed === 0 && results.length > 0 ? 0 : 1);
