import { readFileSync } from "node:fs";
import path from "node:path";
import { runLogged } from "./run-logged";

// npm test's stages, run as child processes up to `lanes` at a time (scripts/test.ts). A stage
// starts once every stage it comes `after` has ended and every stage it `needs` has passed (when
// one failed it is not run, and says so); a stage that must have the machine to itself (`alone`)
// starts when nothing else runs, and nothing starts beside it. Each stage's output goes to a file
// of its own and is printed whole when the stage ends, so the lines of two stages never mix.

export interface StageOutcome {
  passed: number;
  failed: number;
  /** why the run fails because of this stage (beyond failed tests) */
  problems?: string[];
  /** lines to print after the stage's output */
  lines?: string[];
}

export interface Stage {
  name: string;
  command: string;
  args: readonly string[];
  /** stages that must have passed (else this one is not run) */
  needs?: readonly string[];
  /** stages that must have ended, whatever their outcome */
  after?: readonly string[];
  alone?: boolean;
  env?: (env: NodeJS.ProcessEnv) => NodeJS.ProcessEnv;
  /** runs just before the stage starts (clear an old report) */
  before?: () => void;
  /** its tests, from its report; without it the stage counts as no test and fails the run when it fails */
  count?: (exitedOk: boolean) => StageOutcome;
}

export interface StageTiming {
  name: string;
  outcome: "ok" | "FAILED" | "not run";
  seconds: number | null;
  startedAtS: number | null;
  endedAtS: number | null;
}

const slug = (name: string) => name.replace(/[^a-z0-9]+/gi, "-").toLowerCase();

/** Which stages may start now (pure): those whose turn has come, in the order given. */
export function startable(
  stages: readonly Stage[],
  state: { running: ReadonlySet<string>; ended: ReadonlyMap<string, boolean>; lanes: number },
): { start: Stage[]; skip: Array<{ stage: Stage; because: string }> } {
  const start: Stage[] = [];
  const skip: Array<{ stage: Stage; because: string }> = [];
  const running = new Set(state.running);
  const aloneRunning = () => stages.some((s) => s.alone && running.has(s.name));
  for (const s of stages) {
    if (running.has(s.name) || state.ended.has(s.name)) continue;
    const failedNeed = (s.needs ?? []).find((n) => state.ended.get(n) === false);
    if (failedNeed) {
      skip.push({ stage: s, because: failedNeed });
      continue;
    }
    const waiting = [...(s.needs ?? []), ...(s.after ?? [])].some((n) => !state.ended.has(n));
    if (waiting || aloneRunning() || running.size >= state.lanes || (s.alone && running.size > 0)) continue;
    start.push(s);
    running.add(s.name);
  }
  return { start, skip };
}

export async function runStages(
  stages: readonly Stage[],
  opts: { env: NodeJS.ProcessEnv; logDir: string; lanes: number; print?: (text: string) => void },
) {
  const print = opts.print ?? ((t: string) => process.stdout.write(t));
  const t0 = Date.now();
  const since = () => (Date.now() - t0) / 1000;
  const running = new Map<string, Promise<void>>();
  const ended = new Map<string, boolean>();
  const timings = new Map<string, StageTiming>(
    stages.map((s) => [s.name, { name: s.name, outcome: "not run", seconds: null, startedAtS: null, endedAtS: null }]),
  );
  const totals = { passed: 0, failed: 0 };
  const problems: string[] = [];

  const launch = (s: Stage) => {
    const log = path.join(opts.logDir, `${slug(s.name)}.log`);
    const startedAtS = since();
    print(
      `[${startedAtS.toFixed(0).padStart(4)} s] ${s.name} started${running.size ? ` (beside ${[...running.keys()].join(", ")})` : ""}\n`,
    );
    s.before?.();
    const work = runLogged({
      label: s.name,
      command: s.command,
      args: s.args,
      env: s.env ? s.env(opts.env) : opts.env,
      stdoutFile: log,
      stderrFile: log,
    }).then((r) => {
      const exitedOk = r.code === 0;
      const outcome: StageOutcome = s.count ? s.count(exitedOk) : { passed: 0, failed: 0 };
      // a stage whose command failed fails even when its report counted no failed test
      const ok = exitedOk && outcome.failed === 0 && (outcome.problems ?? []).length === 0;
      if (!exitedOk && outcome.failed === 0 && (outcome.problems ?? []).length === 0)
        outcome.problems = [`${s.name} (exit ${r.code ?? r.signal})`];
      totals.passed += outcome.passed;
      totals.failed += outcome.failed;
      problems.push(...(outcome.problems ?? []));
      const endedAtS = since();
      timings.set(s.name, { name: s.name, outcome: ok ? "ok" : "FAILED", seconds: r.seconds, startedAtS, endedAtS });
      print(`\n━━ ${s.name} ━━ (${path.relative(process.cwd(), log)})\n`);
      print(readFileSync(log, "utf8"));
      for (const line of outcome.lines ?? []) print(`${line}\n`);
      print(`━━ ${s.name}: ${ok ? "ok" : "FAILED"} in ${r.seconds.toFixed(1)} s\n\n`);
      ended.set(s.name, ok);
      running.delete(s.name);
    });
    running.set(s.name, work);
  };

  for (;;) {
    const { start, skip } = startable(stages, { running: new Set(running.keys()), ended, lanes: opts.lanes });
    for (const { stage, because } of skip) {
      ended.set(stage.name, false);
      problems.push(`${stage.name} (not run: ${because} failed)`);
      print(`[${since().toFixed(0).padStart(4)} s] ${stage.name} not run: ${because} failed\n`);
    }
    for (const s of start) launch(s);
    if (running.size === 0 && start.length === 0 && skip.length === 0) break;
    if (start.length === 0 && skip.length === 0) await Promise.race(running.values());
  }
  for (const s of stages) if (!ended.has(s.name)) problems.push(`${s.name} (never started: it comes after a stage that is not in the run)`);
  return { ...totals, problems, timings: stages.map((s) => timings.get(s.name)!), totalSeconds: since() };
}
