// `npm test`: the whole suite. Starts what it needs: one embedded PostgreSQL for every stage (or the
// server of DATABASE_URL), the production server for e2e, Chromium through playwright-core and the
// other real parts (tests/support/system-packages.ts); the soak brings its own database and servers.
//
// Stages, in STYLE.md's order, two at a time where the machine allows (scripts/lib/test-stages.ts):
//   house rules (typecheck → lint → format → dead code)  beside  unit
//   build                                                beside  integration
//   bench smoke (every bench:* at BENCH_SMOKE=1)         beside  integration, once the build is there
//   the 5-minute chaos soak (200 nodes)                  beside  bench smoke, then e2e systems
//   e2e systems (HTTP clients, Slurm, docker, BMCs)      beside  the soak, then the browser walks
//   e2e (the browser walks), after the soak: the soak runs a fleet, two app processes and an ingest
//   server, and beside it the walks' timed waits were missed
// The two e2e projects each serve the build on a database of their own (vitest.config.ts).
// Each stage writes its output to test-results/NAME.log, printed when the stage ends, so two
// stages' lines never mix. Ends with the stages' timings and one line "tests: N passed, N failed".
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { findChromium } from "../tests/support/browser";
import { installSystemTools, SYSTEM_TOOLS } from "../tests/support/system-packages";
import { repoRoot } from "./lib/database-url";
import { freePort, startEmbeddedDatabase, type EmbeddedDatabase } from "./lib/embedded-db";
import { runStages, type Stage, type StageOutcome } from "./lib/test-stages";
import { failedTestsIn, type VitestReport } from "./lib/vitest-report";

const resultsDir = path.join(repoRoot, "test-results");
const node = process.execPath;
const vitestBin = path.join(repoRoot, "node_modules", "vitest", "vitest.mjs");
const tsx = ["--import", "tsx", "--conditions=react-server"];

/** A vitest project as a stage: its JSON report counts the tests; a skipped test or an empty project fails it. */
function vitest(project: string, after: string[] = []): Stage {
  const report = path.join(resultsDir, `${project}.json`);
  return {
    name: project,
    after,
    command: node,
    args: [vitestBin, "run", "--project", project, "--reporter=default", "--reporter=json", `--outputFile.json=${report}`],
    before: () => rmSync(report, { force: true }),
    count(ok): StageOutcome {
      if (!existsSync(report)) return { passed: 0, failed: ok ? 0 : 1, problems: ok ? [`${project}: no report`] : [] };
      const r = JSON.parse(readFileSync(report, "utf8")) as VitestReport;
      const problems: string[] = failedTestsIn(r, repoRoot).map((t) => `${project}: ${t}`);
      if (r.numPendingTests > 0) problems.push(`${project}: ${r.numPendingTests} skipped test(s): a skipped test is a defect`);
      if (r.numTotalTests === 0) problems.push(`${project}: no tests ran`);
      return { passed: r.numPassedTests, failed: r.numFailedTests, problems };
    },
  };
}

/** A check that is one command (it counts as no test; its failure fails the run). */
const check = (name: string, script: string, after: string[] = []): Stage => ({ name, after, command: "npm", args: ["run", "-s", script] });

interface SoakSummary {
  ok: boolean;
  /** set instead of the figures when the run itself could not go on (scripts/soak.ts) */
  failure?: { stage: string };
  events_injected: Record<string, unknown>;
  latency_during_chaos: Record<"submit_to_running_ms" | "fault_to_quarantine_ms", { p50: number; p99: number }>;
  invariants: { by_invariant: Record<string, { count: number; examples: Array<{ subject: string; detail: string }> }> };
}

/**
 * The chaos soak at 200 nodes for 5 minutes (scripts/soak.ts), after the integration tests, beside
 * the bench smoke and the e2e systems stage, and before the browser walks: it runs its own embedded PostgreSQL (and restarts
 * it), two app processes, an ingest server and the fleet, and beside it the browser walks missed
 * their waits. It counts as one test, failed by any invariant violation.
 */
function soak(): Stage {
  const report = path.join(resultsDir, "soak.json");
  return {
    name: "chaos soak",
    needs: ["build"],
    // never beside the integration tests: their cycles over 50,000 jobs and waits for background
    // work missed their time limits beside it
    after: ["integration"],
    command: node,
    args: [
      ...tsx,
      path.join(repoRoot, "scripts", "soak.ts"),
      ...["--nodes", "200", "--minutes", "5", "--seed", "1", "--fast-db"],
      ...["--report", report, "--log", path.join(resultsDir, "soak.log")],
    ],
    // its own embedded database: it restarts it
    env: (e) => {
      const own = { ...e };
      delete own.DATABASE_URL;
      return own;
    },
    before: () => rmSync(report, { force: true }),
    count(ok): StageOutcome {
      const r = existsSync(report) ? (JSON.parse(readFileSync(report, "utf8")) as SoakSummary) : undefined;
      const lines: string[] = [];
      if (r?.failure) lines.push(`[soak] the run failed: ${JSON.stringify(r.failure)}`);
      else if (r) {
        lines.push(`[soak] events: ${JSON.stringify(r.events_injected)}`);
        const l = r.latency_during_chaos;
        lines.push(
          `[soak] submit → running p50/p99 ${l.submit_to_running_ms.p50}/${l.submit_to_running_ms.p99} ms; fault → quarantine p50/p99 ${l.fault_to_quarantine_ms.p50}/${l.fault_to_quarantine_ms.p99} ms`,
        );
        for (const [name, v] of Object.entries(r.invariants.by_invariant))
          if (v.count) lines.push(`[soak] VIOLATION ${name} ×${v.count}: ${v.examples.map((e) => `${e.subject}: ${e.detail}`).join("; ")}`);
      }
      const passed = ok && r?.ok === true;
      return {
        passed: passed ? 1 : 0,
        failed: passed ? 0 : 1,
        lines,
        problems: passed
          ? []
          : [
              r?.failure
                ? `chaos soak (${r.failure.stage} failed)`
                : r
                  ? "chaos soak (invariant violations)"
                  : "chaos soak (no report; see test-results/soak.log)",
            ],
      };
    },
  };
}

/** Every bench:* at its smoke size (scripts/bench-smoke.ts): one test per benchmark. */
function benchSmoke(): Stage {
  const summary = path.join(resultsDir, "bench-smoke.json");
  return {
    name: "bench smoke",
    needs: ["build"],
    command: node,
    args: [...tsx, path.join(repoRoot, "scripts", "bench-smoke.ts"), "--summary", summary],
    before: () => rmSync(summary, { force: true }),
    count(ok): StageOutcome {
      if (!existsSync(summary)) return { passed: 0, failed: 1, problems: ["bench smoke (no summary)"] };
      const results = JSON.parse(readFileSync(summary, "utf8")) as Array<{ bench: string; ok: boolean }>;
      const failed = results.filter((r) => !r.ok);
      return {
        passed: results.length - failed.length,
        failed: failed.length + (ok || failed.length ? 0 : 1),
        problems: failed.map((r) => `bench:${r.bench} (smoke)`),
      };
    },
  };
}

async function main(): Promise<number> {
  // the real parts the suite drives, from Debian's packages in one apt-get call when missing
  installSystemTools(Object.values(SYSTEM_TOOLS));
  console.log(`[browser] ${findChromium()}`);
  mkdirSync(resultsDir, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
  let database: EmbeddedDatabase | undefined;
  let tempDir: string | undefined;
  if (!env.DATABASE_URL) {
    tempDir = mkdtempSync(path.join(os.tmpdir(), "gpuforge-test-"));
    database = await startEmbeddedDatabase({
      dataDir: path.join(tempDir, "pg"),
      port: await freePort(),
      fast: true,
      ephemeral: true,
      log: () => {},
    });
    env.TEST_DATABASE_SERVER_URL = database.serverUrl;
    console.log("[db] embedded PostgreSQL started for the test run");
  }
  try {
    const stages: Stage[] = [
      // the house rules, checked by tools (STYLE.md): types, lint (floating promises, import cycles,
      // the boundaries between app, components and lib), formatting, dead code — beside the unit tests
      check("typecheck", "typecheck"),
      vitest("unit"),
      check("lint", "lint", ["typecheck"]),
      check("format", "format:check", ["lint"]),
      check("dead code", "knip", ["format"]),
      // after the house rules in their lane, while the integration tests run in the other
      {
        name: "build",
        after: ["dead code"],
        command: node,
        args: [path.join(repoRoot, "node_modules", "next", "dist", "bin", "next"), "build"],
        env: (e) => ({ ...e, NODE_ENV: "production" }),
      },
      vitest("integration", ["unit"]),
      benchSmoke(),
      // the soak first, beside the bench smoke's tail: the browser walks wait for it
      soak(),
      { ...vitest("e2e-systems", ["integration"]), needs: ["build"] },
      { ...vitest("e2e", ["integration", "bench smoke", "chaos soak"]), needs: ["build"] },
    ];
    const run = await runStages(stages, { env, logDir: resultsDir, lanes: 2 });
    console.log(`\nScreenshots and reports: ${path.relative(repoRoot, resultsDir)}/`);
    console.log("\nStage timings (wall clock, from the run's start):");
    for (const t of run.timings)
      console.log(
        `  ${t.name.padEnd(14)} ${t.outcome.padEnd(8)} ${t.seconds === null ? "" : `${t.seconds.toFixed(1).padStart(7)} s`}   ${t.startedAtS === null ? "" : `${t.startedAtS.toFixed(0).padStart(5)} → ${t.endedAtS!.toFixed(0)} s`}`,
      );
    console.log(`  ${"total".padEnd(14)} ${"".padEnd(8)} ${run.totalSeconds.toFixed(1).padStart(7)} s`);
    if (run.problems.length) {
      console.log("Failed:");
      for (const p of run.problems) console.log(`  ${p}`);
    }
    console.log(`tests: ${run.passed} passed, ${run.failed} failed`);
    return run.problems.length === 0 && run.failed === 0 ? 0 : 1;
  } finally {
    await database?.discard();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : String(e));
    console.log("tests: 0 passed, 1 failed");
    process.exit(1);
  },
);
