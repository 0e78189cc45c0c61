// `npm test`: the whole suite, in STYLE.md's order: typecheck → unit → integration → build →
// end-to-end (HTTP + browser). Starts what it needs: one embedded PostgreSQL for every stage
// (or the server of DATABASE_URL), the production server for e2e, and Chromium through
// playwright-core. Ends with one line "tests: N passed, N failed".
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { findChromium } from "../tests/support/browser";
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
  const ok = run(`${project} tests`, process.execPath, [
    path.join(repoRoot, "node_modules", "vitest", "vitest.mjs"),
    "run",
    "--project",
    project,
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${out}`,
  ], env);
  if (existsSync(out)) {
    const report = JSON.parse(readFileSync(out, "utf8")) as { numPassedTests: number; numFailedTests: number; numTotalTests: number; numPendingTests: number };
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

/** A browser is part of the suite: install Debian's Chromium when we can, fail clearly when we can't. */
function ensureBrowser(): void {
  try {
    console.log(`[browser] ${findChromium()}`);
    return;
  } catch (e) {
    if (process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
      console.log("[browser] Chromium not found: installing Debian's chromium package…");
      spawnSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
      spawnSync("apt-get", ["install", "-y", "-qq", "chromium"], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
      console.log(`[browser] ${findChromium()}`);
      return;
    }
    throw e;
  }
}

async function main(): Promise<number> {
  ensureBrowser();
  const env: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
  let database: EmbeddedDatabase | undefined;
  let tempDir: string | undefined;
  if (!env.DATABASE_URL) {
    tempDir = mkdtempSync(path.join(os.tmpdir(), "gpuforge-test-"));
    database = await startEmbeddedDatabase({ dataDir: path.join(tempDir, "pg"), port: await freePort(), fast: true, ephemeral: true, log: () => {} });
    env.TEST_DATABASE_SERVER_URL = database.serverUrl;
    console.log("[db] embedded PostgreSQL started for the test run");
  }
  try {
    run("typecheck", "npm", ["run", "-s", "typecheck"], env);
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
    if (built) vitest("e2e", env);
    else failedStages.push("e2e (not run: build failed)");
  } finally {
    await database?.stop();
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
