// Endpoint replicas on this node. Each replica runs its endpoint's serving image (or the operator's
// default, GPUFORGE_SERVE_IMAGE on the node) in a container on the replica's GPUs. The container
// gets, in its environment and nothing more:
//   GPUFORGE_MODEL         the endpoint's model;  GPUFORGE_ENDPOINT_ID, GPUFORGE_REPLICA_ID
//   GPUFORGE_METRICS_URL   where to POST its samples ({samples: [{requests, errors, p50_ms, …}]})
//   GPUFORGE_REPORT_TOKEN  a credential for that URL scoped to this replica alone (never the agent key)
// The serving port (the endpoint's, 8000 by default) is published on a host port the agent picks;
// once the container runs, the agent reports that port (fenced) and the inference gateway sends
// the endpoint's traffic there: workload containers cannot reach each other (inter-container
// traffic is off on their network), so the gateway reaches replicas through the node's address.
// Its output goes to the replica's log. When the serving container exits on its own, the agent
// reports the replica unhealthy at once (the control plane replaces it if it stays so) and starts
// a fresh container after a pause.
import type { ReplicaAssignment } from "../../lib/fleet/assignments";
import { RefusedSpec, type Launcher, type ResourceLimits, type Workload } from "./container";
import type { LogSpool } from "./log-spool";
import { placementKey } from "./placement-book";
import type { PortPool } from "./port-pool";

interface Served {
  assignment: ReplicaAssignment;
  key: string;
  workload?: Workload;
  restart?: NodeJS.Timeout;
  stopping?: boolean;
  /** the host port its serving port is published on, and whether the control plane has it */
  hostPort?: number;
  announced?: boolean;
}

const RESTART_AFTER_MS = 10_000;

const replicaContainerName = (a: { replica_id: string }) => `gpuforge-replica-${a.replica_id}`;

export class ReplicaSupervisor {
  private served = new Map<string, Served>();

  constructor(
    private readonly opts: {
      launcher: Launcher;
      logs: LogSpool;
      baseUrl: string;
      /** the operator's default serving image on this node, for endpoints that name none */
      serveImage: string | undefined;
      gpuIndexOf: (gpuId: string) => number | undefined;
      limits: (gpus: number) => ResourceLimits;
      reportUnhealthy: (a: ReplicaAssignment, reason: string) => Promise<void>;
      /** host ports to publish serving ports on, and where to report them (without: nothing is published) */
      ports?: PortPool;
      publishIp?: string;
      reportAddress?: (a: ReplicaAssignment, hostPort: number) => Promise<void>;
      restartAfterMs?: number;
      log?: (m: string) => void;
    },
  ) {}

  get replicaIds(): string[] {
    return [...this.served.keys()];
  }

  reconcile(assignments: ReplicaAssignment[]): void {
    const wanted = new Set(assignments.map((a) => a.replica_id));
    for (const [id, s] of this.served) if (!wanted.has(id)) this.stop(id, s, "no longer assigned to this node");
    for (const a of assignments) if (!this.served.has(a.replica_id)) this.start({ assignment: a, key: placementKey(a) });
    this.announceAll();
  }

  /** Reports the host ports of serving containers that came up (each reconcile, and between heartbeats). */
  announceAll(): void {
    for (const s of this.served.values()) this.announce(s);
  }

  /** Host ports in use by serving containers here. */
  hostPorts(): number[] {
    return [...this.served.values()].flatMap((s) => (s.hostPort ? [s.hostPort] : []));
  }

  /** Tells the control plane where a serving container listens, once it runs (retried each reconcile until it has it). */
  private announce(s: Served) {
    const { reportAddress } = this.opts;
    if (!reportAddress || !s.hostPort || s.announced || s.stopping || !this.opts.launcher.isRunning(replicaContainerName(s.assignment)))
      return;
    s.announced = true;
    reportAddress(s.assignment, s.hostPort).catch((e: unknown) => {
      s.announced = false;
      this.opts.log?.(`replica ${s.assignment.replica_id}: could not report its address: ${(e as Error).message}`);
    });
  }

  stopAll(reason: string): void {
    for (const [id, s] of this.served) this.stop(id, s, reason);
  }

  private start(s: Served) {
    const a = s.assignment;
    this.served.set(a.replica_id, s);
    this.opts.logs.open(s.key, { path: a.logs_path, attempt: a.attempt, fence: a.fence });
    const image = a.image ?? this.opts.serveImage;
    const devices = a.gpu_ids.map((id) => this.opts.gpuIndexOf(id)).filter((i): i is number => i !== undefined);
    if (!image) {
      this.opts.log?.(
        `replica ${a.replica_id} of ${a.endpoint_name} (${a.model}) assigned, but neither the endpoint nor this node (GPUFORGE_SERVE_IMAGE) names a serving image`,
      );
      void this.opts.reportUnhealthy(a, "no serving image: the endpoint names none and the node has no default").catch(() => {});
      return;
    }
    // a container of an earlier agent process (or attempt) for this replica goes first, and is gone
    // before the new one takes its name; the new one starts clean
    this.opts.launcher.removeNow(replicaContainerName(a));
    if (this.opts.ports && s.hostPort === undefined) s.hostPort = this.opts.ports.take(1)?.[0];
    let workload: Workload;
    try {
      workload = this.opts.launcher.start({
        name: replicaContainerName(a),
        image,
        gpus: devices,
        env: {
          GPUFORGE_MODEL: a.model,
          GPUFORGE_ENDPOINT_ID: a.endpoint_id,
          GPUFORGE_REPLICA_ID: a.replica_id,
          GPUFORGE_METRICS_URL: this.opts.baseUrl + a.metrics_path,
          GPUFORGE_REPORT_TOKEN: a.report_token,
          GPUFORGE_PORT: String(a.serving_port),
        },
        labels: { "gpuforge.endpoint": a.endpoint_id, "gpuforge.replica": a.replica_id },
        limits: this.opts.limits(devices.length),
        ...(s.hostPort
          ? {
              publish: [
                { hostPort: s.hostPort, containerPort: a.serving_port, ...(this.opts.publishIp ? { hostIp: this.opts.publishIp } : {}) },
              ],
            }
          : {}),
      });
    } catch (e) {
      const why = e instanceof RefusedSpec ? e.message : (e as Error).message;
      this.opts.log?.(`replica ${a.replica_id}: not started: ${why}`);
      void this.opts.reportUnhealthy(a, `not started: ${why}`).catch(() => {});
      return;
    }
    s.workload = workload;
    workload.onOutput((stream, data) => this.opts.logs.write(s.key, stream, data));
    const restartAfterMs = this.opts.restartAfterMs ?? RESTART_AFTER_MS;
    workload.onExit((code, error) => {
      if (s.stopping) return this.opts.launcher.remove(replicaContainerName(a));
      if (this.served.get(a.replica_id) !== s) return;
      const why = error ?? `exited with ${code}`;
      this.opts.log?.(`replica ${a.replica_id} serving container ${why}; reporting it unhealthy, restarting in ${restartAfterMs / 1000} s`);
      this.opts.logs.write(s.key, "stderr", `[gpuforge-agent] serving container ${why}; restarting in ${restartAfterMs / 1000} s\n`);
      void this.opts.reportUnhealthy(a, `serving container ${why}`).catch(() => {});
      s.restart = setTimeout(() => {
        if (this.served.get(a.replica_id) === s && !s.stopping) {
          this.served.delete(a.replica_id);
          // the fresh container keeps the host port: the gateway's address for it stays right
          this.start({ assignment: a, key: s.key, hostPort: s.hostPort });
        }
      }, restartAfterMs);
    });
    this.opts.log?.(`serving ${a.model} for replica ${a.replica_id} on GPUs ${devices.join(",")} in ${image}`);
  }

  private stop(id: string, s: Served, why: string) {
    s.stopping = true;
    if (s.hostPort) this.opts.ports?.release([s.hostPort]);
    if (s.restart) clearTimeout(s.restart);
    s.workload?.stop();
    this.opts.logs.close(s.key);
    this.served.delete(id);
    this.opts.log?.(`stopped replica ${id}: ${why}`);
  }
}
