// Slurm's command-line tools, as the bridge calls them: argument lists only (never a shell), a
// bounded time and output size, Slurm's own configuration (SLURM_CONF as Slurm reads it) and times
// as epoch seconds (SLURM_TIME_FORMAT=%s). The tools get a minimal environment: nothing of the
// bridge's own (its agent key above all) reaches Slurm, and from there a job (sbatch passes its
// environment on to the job; it has only these).
import { execFile } from "node:child_process";
import path from "node:path";

export class SlurmToolError extends Error {
  constructor(
    readonly tool: string,
    readonly code: number | string | null,
    readonly stderr: string,
  ) {
    super(`${tool} failed (${code ?? "killed"}): ${stderr.trim().split("\n").slice(-3).join(" | ").slice(0, 500)}`);
  }
}

interface ToolResult {
  stdout: string;
  stderr: string;
}

export interface SlurmTools {
  run(tool: string, args: readonly string[], input?: string): Promise<ToolResult>;
}

/** The environment Slurm's tools run with: where Slurm is configured, and nothing else of ours. */
function toolEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const keep = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "SLURM_CONF", "MUNGE_SOCKET"];
  const out: Record<string, string> = { SLURM_TIME_FORMAT: "%s" };
  for (const k of keep) if (env[k]) out[k] = env[k]!;
  return out;
}

export function cliTools(opts: { env: NodeJS.ProcessEnv; binDir?: string; timeoutMs?: number }): SlurmTools {
  const env = toolEnvironment(opts.env);
  return {
    run(tool, args, input) {
      const file = opts.binDir ? path.join(opts.binDir, tool) : tool;
      return new Promise((resolve, reject) => {
        const child = execFile(
          file,
          [...args],
          {
            env: env as NodeJS.ProcessEnv,
            timeout: opts.timeoutMs ?? 30_000,
            maxBuffer: 64 * 1024 * 1024,
            encoding: "utf8",
            killSignal: "SIGKILL",
          },
          (err, stdout, stderr) => {
            if (err)
              reject(
                new SlurmToolError(
                  tool,
                  (err as NodeJS.ErrnoException).code ?? (err as { signal?: string }).signal ?? null,
                  stderr || err.message,
                ),
              );
            else resolve({ stdout, stderr });
          },
        );
        child.stdin?.on("error", () => {});
        if (input !== undefined) child.stdin?.end(input);
        else child.stdin?.end();
      });
    },
  };
}
