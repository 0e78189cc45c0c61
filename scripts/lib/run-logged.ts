import { closeSync, openSync, readFileSync } from "node:fs";
import { repoRoot } from "./database-url";
import { spawnHarness } from "./harness-clients";

export interface LoggedRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** the last lines it wrote to stderr (or to its one log, when both streams go there) */
  stderrTail: string;
  seconds: number;
}

/**
 * Runs a command in its own process group with its output in files (not pipes: nobody has to read
 * them while it runs, and they are there to read afterwards). With `timeoutMs`, the whole group is
 * killed when it runs past it. `stderrFile` may be `stdoutFile`: one log, both streams in order.
 */
export function runLogged(opts: {
  label: string;
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  stdoutFile: string;
  stderrFile?: string;
  timeoutMs?: number;
}): Promise<LoggedRun> {
  const started = Date.now();
  const out = openSync(opts.stdoutFile, "w");
  const err = opts.stderrFile && opts.stderrFile !== opts.stdoutFile ? openSync(opts.stderrFile, "w") : out;
  const child = spawnHarness(opts.label, opts.command, opts.args, {
    cwd: repoRoot,
    env: opts.env,
    stdio: ["ignore", out, err],
    detached: true,
  });
  let timedOut = false;
  const timer = opts.timeoutMs
    ? setTimeout(() => {
        timedOut = true;
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          /* gone already */
        }
      }, opts.timeoutMs)
    : undefined;
  return new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      closeSync(out);
      if (err !== out) closeSync(err);
      const tail = readFileSync(opts.stderrFile ?? opts.stdoutFile, "utf8")
        .trimEnd()
        .split("\n")
        .slice(-15)
        .join("\n");
      resolve({ code, signal, timedOut, stderrTail: tail, seconds: (Date.now() - started) / 1000 });
    });
  });
}
