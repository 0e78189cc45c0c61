import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { spawnHarness } from "../../scripts/lib/harness-clients";
import type { SlurmSandbox } from "../../scripts/lib/slurm-sandbox";

// The Slurm bridge as an operator runs it (`npm run slurm-bridge`: tsx agent/src/slurm/main.ts),
// pointed at a sandbox Slurm and the app under test, in a process of its own; its log is kept for
// the assertions and for a failing test's message.

export interface RunningBridge {
  child: ChildProcess;
  lines: string[];
  /** SIGKILL, as a crash would (its Slurm jobs keep running) */
  kill(): Promise<void>;
  /** SIGTERM, as systemd stops it */
  stop(): Promise<void>;
  log(): string;
}

export function startBridge(o: {
  slurm: SlurmSandbox;
  baseUrl: string;
  key: string;
  stateDir: string;
  env?: Record<string, string>;
}): RunningBridge {
  const lines: string[] = [];
  const child = spawnHarness("slurm-bridge", process.execPath, ["--import", "tsx", path.resolve("agent/src/slurm/main.ts")], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      GPUFORGE_URL: o.baseUrl,
      GPUFORGE_AGENT_KEY: o.key,
      ...o.slurm.env,
      SLURM_BRIDGE_STATE_DIR: o.stateDir,
      SLURM_OUTPUT_DIR: o.slurm.outputDir,
      SLURM_CONTAINER: "oci",
      SLURM_OCI_BUNDLES: o.slurm.bundles,
      SLURM_POLL_INTERVAL_S: "1",
      ...o.env,
    } as unknown as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const take = (d: Buffer) => lines.push(...d.toString("utf8").split("\n").filter(Boolean));
  child.stdout!.on("data", take);
  child.stderr!.on("data", take);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await exited;
  };
  return { child, lines, kill: () => end("SIGKILL"), stop: () => end("SIGTERM"), log: () => lines.slice(-60).join("\n") };
}

/** Polls an async condition every 250 ms until it returns a value; throws with `why()` after `ms`. */
export async function eventually<T>(
  probe: () => Promise<T | null | undefined | false>,
  ms: number,
  why: () => string = () => "",
): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end)
      throw new Error(`timed out after ${ms} ms${last ? ` (${(last as Error).message ?? JSON.stringify(last)})` : ""}\n${why()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
