// Endpoint replicas on this node. Model serving (vLLM, TGI, Triton…) is not GPUForge's: with
// GPUFORGE_SERVE_COMMAND set, the agent starts that command once per replica it is assigned, on the
// replica's GPUs, and stops it when the assignment goes away. The command reads:
//   CUDA_VISIBLE_DEVICES   the replica's GPU indexes on this node
//   GPUFORGE_MODEL         the endpoint's model;  GPUFORGE_ENDPOINT_ID, GPUFORGE_REPLICA_ID
//   GPUFORGE_METRICS_URL   where to POST its samples ({samples: [{replica_id, requests, errors, p50_ms, …}]})
//   GPUFORGE_AGENT_KEY     the key to post them with
// When the serving process exits on its own, the agent reports the replica unhealthy at once (the
// control plane replaces it if it stays so) and starts it again after a pause.
import { spawn, type ChildProcess } from "node:child_process";
import type { ReplicaAssignment } from "./runner";

interface Served {
  assignment: ReplicaAssignment;
  proc?: ChildProcess;
  restart?: NodeJS.Timeout;
  stopping?: boolean;
}

export const RESTART_AFTER_MS = 10_000;

export class ReplicaSupervisor {
  private served = new Map<string, Served>();

  constructor(
    private readonly opts: {
      serveCommand: string | undefined;
      baseUrl: string;
      agentKey: string;
      gpuIndexOf: (gpuId: string) => number | undefined;
      reportUnhealthy: (a: ReplicaAssignment, reason: string) => Promise<void>;
      restartAfterMs?: number;
      log?: (m: string) => void;
    },
  ) {}

  get replicaIds(): string[] {
    return [...this.served.keys()];
  }

  reconcile(assignments: ReplicaAssignment[]): void {
    const wanted = new Set(assignments.map((a) => a.replica_id));
    for (const [id, s] of this.served) if (!wanted.has(id)) this.stop(id, s);
    for (const a of assignments) if (!this.served.has(a.replica_id)) this.start({ assignment: a });
  }

  stopAll(): void {
    for (const [id, s] of this.served) this.stop(id, s);
  }

  private start(s: Served) {
    const a = s.assignment;
    this.served.set(a.replica_id, s);
    if (!this.opts.serveCommand) {
      this.opts.log?.(`replica ${a.replica_id} of ${a.endpoint_name} (${a.model}) assigned; GPUFORGE_SERVE_COMMAND is not set, so the serving side must be started by other means`);
      return;
    }
    const devices = a.gpu_ids.map((id) => this.opts.gpuIndexOf(id)).filter((i): i is number => i !== undefined);
    const proc = spawn("sh", ["-c", this.opts.serveCommand], {
      stdio: "ignore",
      env: {
        ...process.env,
        CUDA_VISIBLE_DEVICES: devices.join(","),
        GPUFORGE_MODEL: a.model,
        GPUFORGE_ENDPOINT_ID: a.endpoint_id,
        GPUFORGE_REPLICA_ID: a.replica_id,
        GPUFORGE_METRICS_URL: this.opts.baseUrl + a.metrics_path,
        GPUFORGE_AGENT_KEY: this.opts.agentKey,
      },
    });
    s.proc = proc;
    const restartAfterMs = this.opts.restartAfterMs ?? RESTART_AFTER_MS;
    const exited = (why: string) => {
      if (s.stopping || this.served.get(a.replica_id) !== s) return;
      this.opts.log?.(`replica ${a.replica_id} serving process ${why}; reporting it unhealthy, restarting in ${restartAfterMs / 1000} s`);
      void this.opts.reportUnhealthy(a, `serving process ${why}`).catch(() => {});
      s.restart = setTimeout(() => {
        if (this.served.get(a.replica_id) === s && !s.stopping) this.start({ assignment: a });
      }, restartAfterMs);
    };
    proc.once("error", (e) => exited(`failed to start: ${e.message}`));
    proc.once("exit", (code, signal) => exited(signal ? `killed by ${signal}` : `exited with ${code}`));
    this.opts.log?.(`serving ${a.model} for replica ${a.replica_id} on GPUs ${devices.join(",")}`);
  }

  private stop(id: string, s: Served) {
    s.stopping = true;
    if (s.restart) clearTimeout(s.restart);
    if (s.proc && s.proc.exitCode === null) s.proc.kill("SIGTERM");
    this.served.delete(id);
    this.opts.log?.(`stopped replica ${id}: no longer assigned to this node`);
  }
}
