// Jobs on this node: each assignment is one placement (a job attempt, named by its fence), run in a
// container on the placement's GPUs and nothing else (containers only: a command runs inside its
// image, never on the host). The placement book guarantees a placement starts at most once;
// its exit is written to the outbox before the agent lets go of it; its output goes to the log
// spool. Work the control plane no longer assigns is stopped without a report (it was taken
// away); work stopped because the agent's lease lapsed is reported interrupted.
//
// A job's container gets its own environment (a pipeline step's, resolved by the control plane)
// and, from GPUForge: GPUFORGE_JOB_ID, GPUFORGE_ATTEMPT, GPUFORGE_OUTPUTS_URL and
// GPUFORGE_REPORT_TOKEN, a credential scoped to this placement that lets the workload post its
// own outputs ({"outputs": {...}}) and nothing else. The agent key never enters a container.
import type { Assignment, JobAssignment, PodAssignment, ReplicaAssignment } from "../../lib/fleet/assignments";
import { RefusedSpec, type Launcher, type ResourceLimits, type Workload } from "./container";
import type { LogSpool } from "./log-spool";
import type { ExitReport, Outbox } from "./outbox";
import { placementKey, type PlacementBook, type PlacementEntry } from "./placement-book";

export const jobsOf = (a: Assignment[]) => a.filter((x): x is JobAssignment => x.kind === "job");
export const replicasOf = (a: Assignment[]) => a.filter((x): x is ReplicaAssignment => x.kind === "endpoint_replica");
export const podsOf = (a: Assignment[]) => a.filter((x): x is PodAssignment => x.kind === "pod");

export const containerName = (a: { job_id: string; attempt: number }) => `gpuforge-job-${a.job_id}-${a.attempt}`;

export interface RunnerOptions {
  book: PlacementBook;
  outbox: Outbox;
  logs: LogSpool;
  launcher: Launcher;
  gpuIndexOf: (gpuId: string) => number | undefined;
  limits: (gpus: number) => ResourceLimits;
  /** the control plane's URL, for the outputs address handed to containers */
  baseUrl?: string;
  log?: (m: string) => void;
}

interface Live {
  entry: PlacementEntry;
  workload?: Workload;
  timer?: NodeJS.Timeout;
  /** set when the agent stops it: the exit that follows is not the workload's own */
  stopping?: "unassigned" | "interrupted";
  interruptReason?: string;
}

export class Runner {
  private live = new Map<string, Live>();

  constructor(private readonly opts: RunnerOptions) {}

  /** Placements running now (by key). */
  get running(): string[] {
    return [...this.live.keys()];
  }

  /**
   * After an agent restart: containers of placements the book says were running are found again
   * (their output and exit are followed as before), or, when they are gone, reported interrupted.
   */
  resume(): void {
    for (const e of this.opts.book.list("running")) {
      if (e.kind !== "job" || this.live.has(e.key)) continue;
      if (this.opts.outbox.has(e.key)) {
        this.opts.book.ended(e.key, "finished"); // it ended and was recorded just before the restart
        continue;
      }
      if (!e.container) {
        // work that runs nothing: hold its GPUs for what is left of its time
        const rest = e.holdUntil ? Math.max(0, new Date(e.holdUntil).getTime() - Date.now()) : 0;
        this.live.set(e.key, { entry: e, timer: setTimeout(() => this.finish(e.key, 0), rest) });
        continue;
      }
      const workload = this.opts.launcher.adopt(e.container, e.startedAt);
      if (!workload) {
        this.opts.log?.(`job ${e.id} attempt ${e.attempt}: its container is gone after the agent restarted; reporting it interrupted`);
        this.report(e, { status: "interrupted", exit_code: -1, error: "the container was lost while the node agent restarted" });
        this.opts.book.ended(e.key, "finished");
        continue;
      }
      this.opts.log?.(`job ${e.id} attempt ${e.attempt}: found its container again after a restart`);
      this.follow(e, workload);
    }
  }

  /** Starts what is assigned and was never started here; stops what runs and is no longer assigned. */
  reconcile(assignments: JobAssignment[]): void {
    const wanted = new Map(assignments.map((a) => [placementKey(a), a]));
    for (const [key, l] of this.live) if (!wanted.has(key)) this.stop(key, l, "unassigned");
    for (const [key, a] of wanted) {
      // the one rule: a placement this node has ever started is never started again
      if (this.opts.book.has(key)) continue;
      this.start(key, a);
    }
  }

  /** The agent's lease lapsed: the control plane has moved this work elsewhere, so it stops here. */
  interruptAll(reason: string): void {
    for (const [key, l] of this.live) this.stop(key, l, "interrupted", reason);
  }

  private start(key: string, a: JobAssignment) {
    const devices = a.gpu_ids.map((id) => this.opts.gpuIndexOf(id)).filter((i): i is number => i !== undefined);
    const runsSomething = Boolean(a.image || a.command);
    const entry = this.opts.book.started({
      key,
      kind: "job",
      id: a.job_id,
      attempt: a.attempt,
      fence: a.fence,
      ...(runsSomething ? { container: containerName(a) } : { holdUntil: new Date(Date.now() + (a.duration_s ?? 0) * 1000).toISOString() }),
    });
    if (!runsSomething) {
      this.live.set(key, { entry, timer: setTimeout(() => this.finish(key, 0), (a.duration_s ?? 0) * 1000) });
      return;
    }
    this.opts.logs.open(key, { path: a.logs_path, attempt: a.attempt, fence: a.fence });
    const refuse = (why: string) => {
      this.opts.log?.(`job ${a.job_id} attempt ${a.attempt} refused: ${why}`);
      this.opts.logs.write(key, "stderr", `[gpuforge-agent] not started: ${why}\n`);
      this.opts.logs.close(key);
      this.report(entry, { status: "failed", exit_code: 125, error: `not started: ${why}` });
      this.opts.book.ended(key, "finished");
    };
    if (!a.image) return refuse("a command runs only inside a container image, and the assignment names none");
    if (devices.length !== a.gpu_ids.length) return refuse("the assignment names GPUs this node does not have");
    let workload: Workload;
    try {
      workload = this.opts.launcher.start({
        name: containerName(a),
        image: a.image,
        ...(a.command !== undefined ? { command: a.command } : {}),
        gpus: devices,
        env: {
          ...a.env,
          GPUFORGE_JOB_ID: a.job_id,
          GPUFORGE_ATTEMPT: String(a.attempt),
          ...(a.outputs_path && a.report_token
            ? { GPUFORGE_OUTPUTS_URL: (this.opts.baseUrl ?? "") + a.outputs_path, GPUFORGE_REPORT_TOKEN: a.report_token }
            : {}),
        },
        labels: { "gpuforge.job": a.job_id, "gpuforge.attempt": String(a.attempt) },
        limits: this.opts.limits(devices.length),
      });
    } catch (e) {
      return refuse(e instanceof RefusedSpec ? e.message : `the container could not be started: ${(e as Error).message}`);
    }
    this.opts.log?.(`started job ${a.job_id} attempt ${a.attempt} on GPUs ${devices.join(",")} in ${a.image}`);
    const l = this.follow(entry, workload);
    if (a.duration_s) l.timer = setTimeout(() => workload.stop(), a.duration_s * 1000);
  }

  private follow(entry: PlacementEntry, workload: Workload): Live {
    const l: Live = { entry, workload };
    this.live.set(entry.key, l);
    workload.onOutput((stream, data) => this.opts.logs.write(entry.key, stream, data));
    workload.onExit((code, error) => this.finish(entry.key, code, error));
    return l;
  }

  private finish(key: string, exitCode: number, error?: string) {
    const l = this.live.get(key);
    if (!l) return;
    this.live.delete(key);
    if (l.timer) clearTimeout(l.timer);
    this.opts.logs.close(key);
    if (l.entry.container) this.opts.launcher.remove(l.entry.container);
    if (l.stopping === "unassigned") {
      this.opts.book.ended(key, "stopped");
      return;
    }
    // the outcome is on disk before the book lets go of the placement
    if (l.stopping === "interrupted")
      this.report(l.entry, { status: "interrupted", exit_code: exitCode, error: l.interruptReason ?? "stopped by the node agent" });
    else this.report(l.entry, { status: exitCode === 0 ? "completed" : "failed", exit_code: exitCode, ...(error ? { error } : {}) });
    this.opts.book.ended(key, "finished");
  }

  private stop(key: string, l: Live, why: "unassigned" | "interrupted", reason?: string) {
    if (l.stopping) return;
    l.stopping = why;
    l.interruptReason = reason;
    this.opts.log?.(
      `stopping job ${l.entry.id} attempt ${l.entry.attempt}: ${why === "unassigned" ? "no longer assigned to this node" : reason}`,
    );
    if (l.workload) l.workload.stop();
    else this.finish(key, -1);
  }

  private report(e: PlacementEntry, outcome: Pick<ExitReport, "status" | "exit_code" | "error">) {
    this.opts.outbox.add({
      key: e.key,
      job_id: e.id,
      attempt: e.attempt,
      fence: e.fence,
      ...outcome,
      finished_at: new Date().toISOString(),
    });
  }
}
