// Slurm's job states, and how a placement's Slurm job ended in GPUForge's words. Pure (no I/O).
// The bridge reads squeue's and scontrol's states through it; a state this code does not know is
// "unknown" and ends nothing (the bridge keeps following the job and says so once).

export type JobPhase = "waiting" | "running" | "ended" | "unknown";

const WAITING = new Set([
  "PENDING",
  "CONFIGURING",
  "REQUEUED",
  "REQUEUE_HOLD",
  "REQUEUE_FED",
  "RESV_DEL_HOLD",
  "SPECIAL_EXIT_HOLD",
  "POWER_UP_NODE",
  "EXPEDITING",
]);
/** it holds its allocation (suspended and stopped jobs keep their GPUs; completing ones still run their epilog) */
const RUNNING = new Set(["RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "RESIZING", "SIGNALING", "STAGE_OUT", "UPDATE_DB"]);
const ENDED = new Set([
  "COMPLETED",
  "FAILED",
  "TIMEOUT",
  "CANCELLED",
  "NODE_FAIL",
  "PREEMPTED",
  "BOOT_FAIL",
  "DEADLINE",
  "OUT_OF_MEMORY",
  "SPECIAL_EXIT",
  "REVOKED",
  "LAUNCH_FAILED",
]);

/** squeue prints `CANCELLED by 0`; scontrol may add flags after a `+`: the state is the first word. */
export function normaliseJobState(raw: string): string {
  return (
    raw
      .trim()
      .toUpperCase()
      .split(/[\s+]/)[0]
      ?.replace(/[^A-Z_]/g, "") ?? ""
  );
}

export function jobPhase(state: string): JobPhase {
  const s = normaliseJobState(state);
  if (WAITING.has(s)) return "waiting";
  if (RUNNING.has(s)) return "running";
  if (ENDED.has(s)) return "ended";
  return "unknown";
}

/** Slurm's `ExitCode=code:signal` as one exit code: the code, or 128 + the signal that killed it. */
export function exitCodeOf(slurm: string | null | undefined): number | null {
  const m = /^(\d+):(\d+)$/.exec((slurm ?? "").trim());
  if (!m) return null;
  const [code, signal] = [Number(m[1]), Number(m[2])];
  return signal > 0 ? 128 + signal : code;
}

export interface EndReport {
  status: "completed" | "failed" | "interrupted";
  exit_code: number;
  error?: string;
}

/**
 * How an ended Slurm job is reported. `cancelledByUs`: the bridge cancelled it itself (the work was
 * taken away, and nothing is reported). A node failure is a failure (the job's retries decide
 * whether it runs again); preemption, boot and launch failures, and a federation revoking it are not
 * the job's doing: reported interrupted, so it runs again without spending a retry.
 */
export function endReport(state: string, exitCode: string | null | undefined, reason?: string | null): EndReport {
  const s = normaliseJobState(state);
  const code = exitCodeOf(exitCode);
  const why = reason && reason !== "None" ? ` (${reason})` : "";
  switch (s) {
    case "COMPLETED":
      return code && code !== 0 ? { status: "failed", exit_code: code } : { status: "completed", exit_code: 0 };
    case "FAILED":
      return { status: "failed", exit_code: code ?? 1, error: `Slurm: FAILED${why}` };
    case "TIMEOUT":
      return { status: "failed", exit_code: code ?? 143, error: "Slurm: TIMEOUT: the job ran past its time limit (its duration_s)" };
    case "OUT_OF_MEMORY":
      return { status: "failed", exit_code: code ?? 137, error: "Slurm: OUT_OF_MEMORY: the job ran out of memory" };
    case "DEADLINE":
      return { status: "failed", exit_code: code ?? 143, error: "Slurm: DEADLINE: the job's deadline passed" };
    case "NODE_FAIL":
      return { status: "failed", exit_code: code ?? -1, error: `Slurm: NODE_FAIL: a node of the job failed${why}` };
    case "CANCELLED":
      return { status: "failed", exit_code: code ?? 143, error: `Slurm: CANCELLED outside GPUForge (by Slurm or its admins)${why}` };
    case "SPECIAL_EXIT":
      return { status: "failed", exit_code: code ?? 1, error: "Slurm: SPECIAL_EXIT" };
    case "PREEMPTED":
      return { status: "interrupted", exit_code: -1, error: "Slurm preempted the job" };
    case "BOOT_FAIL":
      return { status: "interrupted", exit_code: -1, error: "Slurm could not boot the job's nodes (BOOT_FAIL)" };
    case "LAUNCH_FAILED":
      return { status: "interrupted", exit_code: -1, error: "Slurm could not launch the job (LAUNCH_FAILED)" };
    case "REVOKED":
      return { status: "interrupted", exit_code: -1, error: "Slurm revoked the job (it started on another cluster of the federation)" };
    default:
      return { status: "interrupted", exit_code: -1, error: `Slurm ended the job in state ${s || state}` };
  }
}
