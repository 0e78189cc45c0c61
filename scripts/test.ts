// `npm test`: the whole suite, in STYLE.md's order: typecheck, lint, format and dead-code checks → unit → integration → build →
// end-to-end (HTTP + browser) → the 5-minute chaos soak (200 nodes). Starts what it needs: one embedded PostgreSQL for every stage (or the server of
// DATABASE_URL), the production server for e2e, and Chromium through playwright-core; the soak
// brings its own database and servers. Ends with one line "tests: N passed, N failed".
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { findChromium } from "../tests/support/browser";
import { installSystemTools, SYSTEM_TOOLS } from "../tests/support/system-packages";
import { repoRoot } from "./lib/database-url";
import { freePort, startEmbeddedDatabase, type EmbeddedDatabase } from "./lib/embedded-db";
import { nextBuild } from "./lib/next-server";

const resultsDir = path.join(repoRoot, "test-results");
const totals = { passed: 0, failed: 0 };
const failedStages: string[] = [];

function run(stage: string, cmd: string, args: string[], env: NodeJS.ProcessEnv): boolean {
  console.log(`\n━━ ${stage} ━━`);
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: repoRoot, stdio: "inherit", env });
  console.log(`━━ ${stage}: ${r.status === 0 ? "ok" : "FAILED"} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (r.status !== 0) failedStages.push(stage);
  return r.status === 0;
}

function vitest(project: string, env: NodeJS.ProcessEnv): boolean {
  const out = path.join(resultsDir, `${project}.json`);
  rmSync(out, { force: true });
  const ok = run(
    `${project} tests`,
    process.execPath,
    [
      path.join(repoRoot, "node_modules", "vitest", "vitest.mjs"),
      "run",
      "--project",
      project,
      "--reporter=default",
      "--reporter=json",
      `--outputFile.json=${out}`,
    ],
    env,
  );
  if (existsSync(out)) {
    const report = JSON.parse(readFileSync(out, "utf8")) as {
      numPassedTests: number;
      numFailedTests: number;
      numTotalTests: number;
      numPendingTests: number;
    };
    totals.passed += report.numPassedTests;
    totals.failed += report.numFailedTests;
    if (report.numPendingTests > 0) {
      console.error(`${project}: ${report.numPendingTests} skipped test(s): a skipped test is a defect`);
      failedStages.push(`${project} (skipped tests)`);
    }
    if (report.numTotalTests === 0) failedStages.push(`${project} (no tests ran)`);
  } else if (ok) {
    failedStages.push(`${project} (no report)`);
  }
  return ok;
}

/**
 * The chaos soak at 200 nodes for 5 minutes (scripts/soak.ts), after the e2e stage: it runs its
 * own embedded PostgreSQL (it restarts it), app processes and ingest servers. Beside the e2e stage
 * it saved about five minutes but, with two app processes and its fleet on the same two cores, made
 * the browser walks miss their waits. It counts as one test, failed by any invariant violation.
 */
function startSoak(env: NodeJS.ProcessEnv) {
  mkdirSync(resultsDir, { recursive: true });
  const file = (name: string) => openSync(path.join(resultsDir, name), "w");
  const soakEnv = { ...env };
  delete soakEnv.DATABASE_URL;
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "--conditions=react-server",
      path.join(repoRoot, "scripts", "soak.ts"),
      "--nodes",
      "200",
      "--minutes",
      "5",
      "--seed",
      "1",
      "--fast-db",
      "--report",
      path.join(resultsDir, "soak.json"),
      "--log",
      path.join(resultsDir, "soak.log"),
    ],
    // files, not pipes: nothing reads a pipe while the e2e stage runs synchronously
    { cwd: repoRoot, env: soakEnv, stdio: ["ignore", file("soak.out"), file("soak.err")] },
  );
  const started = Date.now();
  const exited = new Promise<number>((resolve) => child.once("exit", (code) => resolve(code ?? 1)));
  console.log("[soak] 200 nodes × 5 minutes started (test-results/soak.log)");
  return {
    async finish(): Promise<void> {
      const code = await exited;
      console.log(`\n━━ chaos soak: ${code === 0 ? "ok" : "FAILED"} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      const report = existsSync(path.join(resultsDir, "soak.json"))
        ? (JSON.parse(readFileSync(path.join(resultsDir, "soak.json"), "utf8")) as SoakSummary)
        : undefined;
      if (report?.failure) console.log(`[soak] the run failed: ${JSON.stringify(report.failure)}`);
      else if (report) {
        console.log(`[soak] events: ${JSON.stringify(report.events_injected)}`);
        console.log(
          `[soak] submit → running p50/p99 ${report.latency_during_chaos.submit_to_running_ms.p50}/${report.latency_during_chaos.submit_to_running_ms.p99} ms; fault → quarantine p50/p99 ${report.latency_during_chaos.fault_to_quarantine_ms.p50}/${report.latency_during_chaos.fault_to_quarantine_ms.p99} ms`,
        );
        for (const [name, v] of Object.entries(report.invariants.by_invariant))
          if (v.count)
            console.log(`[soak] VIOLATION ${name} ×${v.count}: ${v.examples.map((e) => `${e.subject}: ${e.detail}`).join("; ")}`);
      }
      if (code === 0 && report?.ok) totals.passed++;
      else {
        totals.failed++;
        failedStages.push(
          report?.failure
            ? `chaos soak (${report.failure.stage} failed)`
            : report
              ? "chaos soak (invariant violations)"
              : `chaos soak (exit ${code}, no report; see test-results/soak.log)`,
        );
      }
    },
  };
}

interface SoakSummary {
  ok: boolean;
  /** set instead of the figures when the run itself could not go on (scripts/soak.ts) */
  failure?: { stage: string };
  events_injected: Record<string, unknown>;
  latency_during_chaos: Record<"submit_to_running_ms" | "fault_to_quarantine_ms", { p50: number; p99: number }>;
  invariants: { by_invariant: Record<string, { count: number; examples: Array<{ subject: string; detail: string }> }> };
}

/**
 * The real parts the suite drives (Chromium, a docker engine, a software TPM, Slurm, sushy):
 * installed from Debian's packages in one apt-get call when missing, failing clearly when they
 * cannot be (tests/support/system-packages.ts).
 */
function ensureSystemTools(): void {
  installSystemTools(Object.values(SYSTEM_TOOLS));
  console.log(`[browser] ${findChromium()}`);
}

async function main(): Promise<number> {
  ensureSystemTools();
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
    // the house rules, checked by tools before any test runs (STYLE.md): types, lint (floating
    // promises, import cycles, the boundaries between app, components and lib), formatting, dead code
    run("typecheck", "npm", ["run", "-s", "typecheck"], env);
    run("lint", "npm", ["run", "-s", "lint"], env);
    run("format", "npm", ["run", "-s", "format:check"], env);
    run("dead code", "npm", ["run", "-s", "knip"], env);
    vitest("unit", env);
    vitest("integration", env);
    console.log("\n━━ build ━━");
    let built = true;
    try {
      nextBuild({ ...env, NODE_ENV: "production" } as NodeJS.ProcessEnv);
    } catch (e) {
      built = false;
      failedStages.push("build");
      console.error(String(e));
    }
    if (built) {
      vitest("e2e", env);
      await startSoak(env).finish();
    } else failedStages.push("e2e and chaos soak (not run: build failed)");
  } finally {
    await database?.discard();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  }
  console.log(`\nScreenshots and reports: ${path.relative(repoRoot, resultsDir)}/`);
  if (failedStages.length) console.log(`Failed: ${failedStages.join(", ")}`);
  console.log(`tests: ${totals.passed} passed, ${totals.failed} failed`);
  return failedStages.length === 0 && totals.failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : String(e));
    console.log(`tests: ${totals.passed} passed, ${totals.failed + 1} failed`);
    process.exit(1);
  },
);
