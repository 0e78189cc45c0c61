import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import type { ExitReport } from "./outbox";

export interface JobAssignment {
  kind?: "job";
  job_id: string;
  gpu_ids: string[];
  image?: string;
  command?: string;
  duration_s?: number;
}

export interface ReplicaAssignment {
  kind: "endpoint_replica";
  replica_id: string;
  endpoint_id: string;
  endpoint_name: string;
  model: string;
  gpu_ids: string[];
  metrics_path: string;
}

/** What a heartbeat answers: jobs to run and endpoint replicas to serve (older servers send jobs without `kind`). */
export type Assignment = JobAssignment | ReplicaAssignment;

export const jobsOf = (a: Assignment[]) => a.filter((x): x is JobAssignment => x.kind !== "endpoint_replica");
export const replicasOf = (a: Assignment[]) => a.filter((x): x is ReplicaAssignment => x.kind === "endpoint_replica");

interface Running {
  assignment: JobAssignment;
  proc?: ChildProcess;
  timer?: NodeJS.Timeout;
  stopping?: boolean;
}

export function dockerAvailable(): boolean {
  return spawnSync("docker", ["info", "--format", "{{.ServerVersion}}"], { stdio: "ignore", timeout: 5_000 }).status === 0;
}

/**
 * Runs what the control plane assigns: a container when an image is given and Docker runs here,
 * else a local process, else (no command) a placeholder that holds the GPUs for duration_s.
 * Work the control plane no longer assigns is stopped without a report (it was taken away).
 */
export class Runner {
  private running = new Map<string, Running>();

  constructor(
    private readonly opts: {
      gpuIndexOf: (gpuId: string) => number | undefined;
      docker: boolean;
      onExit: (report: ExitReport) => void;
      log?: (m: string) => void;
    },
  ) {}

  get jobIds(): string[] {
    return [...this.running.keys()];
  }

  reconcile(assignments: JobAssignment[]): void {
    const wanted = new Set(assignments.map((a) => a.job_id));
    for (const [id, r] of this.running) if (!wanted.has(id)) this.stop(id, r);
    for (const a of assignments) if (!this.running.has(a.job_id)) this.start(a);
  }

  stopAll(): void {
    for (const [id, r] of this.running) this.stop(id, r);
  }

  private start(a: JobAssignment) {
    const devices = a.gpu_ids.map((id) => this.opts.gpuIndexOf(id)).filter((i): i is number => i !== undefined);
    const r: Running = { assignment: a };
    this.running.set(a.job_id, r);
    const finish = (exitCode: number, error?: string) => {
      if (r.timer) clearTimeout(r.timer);
      this.running.delete(a.job_id);
      if (r.stopping) return;
      this.opts.onExit({
        job_id: a.job_id,
        status: exitCode === 0 ? "completed" : "failed",
        exit_code: exitCode,
        ...(error ? { error } : {}),
        finished_at: new Date().toISOString(),
      });
    };
    if (!a.command && !a.image) {
      r.timer = setTimeout(() => finish(0), Math.max(0, (a.duration_s ?? 0) * 1000));
      return;
    }
    const proc =
      a.image && this.opts.docker
        ? spawn("docker", ["run", "--rm", "--name", `gpuforge-${a.job_id}`, "--gpus", `"device=${devices.join(",")}"`, a.image, ...(a.command ? ["sh", "-c", a.command] : [])], { stdio: "ignore" })
        : spawn("sh", ["-c", a.command ?? "true"], { stdio: "ignore", env: { ...process.env, CUDA_VISIBLE_DEVICES: devices.join(","), GPUFORGE_JOB_ID: a.job_id } });
    r.proc = proc;
    proc.once("error", (e) => finish(127, e.message));
    proc.once("exit", (code, signal) => finish(code ?? 128, signal ? `killed by ${signal}` : undefined));
    if (a.duration_s) r.timer = setTimeout(() => proc.kill("SIGTERM"), a.duration_s * 1000);
    this.opts.log?.(`started job ${a.job_id} on GPUs ${devices.join(",")}`);
  }

  private stop(id: string, r: Running) {
    r.stopping = true;
    if (r.timer) clearTimeout(r.timer);
    if (r.proc && r.proc.exitCode === null) {
      if (r.assignment.image && this.opts.docker) spawn("docker", ["stop", `gpuforge-${id}`], { stdio: "ignore" });
      r.proc.kill("SIGTERM");
    }
    this.running.delete(id);
    this.opts.log?.(`stopped job ${id}: no longer assigned to this node`);
  }
}
