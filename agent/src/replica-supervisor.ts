// Endpoint replicas on this node. Each replica runs its endpoint's serving image (or the operator's
// default, GPUFORGE_SERVE_IMAGE on the node) in a container on the replica's GPUs. The container
// gets, in its environment and nothing more:
//   GPUFORGE_MODEL         the endpoint's model;  GPUFORGE_ENDPOINT_ID, GPUFORGE_REPLICA_ID
//   GPUFORGE_METRICS_URL   where to POST its samples ({samples: [{requests, errors, p50_ms, …}]})
//   GPUFORGE_REPORT_TOKEN  a credential for that URL scoped to this replica alone (never the agent key)
// The serving port (the endpoint's, 8000 by default) is not published: the agent's access guard
// (access-guard.ts) listens on a host port the agent picks and forwards the inference gateway's
// requests — those carrying the replica's access secret — to the container's address on the
// workload network; nobody else on the node or its network gets through. Once the container runs,
// the agent reports that host port (fenced) and the gateway sends the endpoint's traffic there.
// Its output goes to the replica's log. When the serving container exits on its own, the agent
// reports the replica unhealthy at once (the control plane replaces it if it stays so) and starts
// a fresh container after a pause.
import type { ReplicaAssignment } from "../../lib/fleet/assignments";
import { AccessGuard } from "./access-guard";
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
  /** the host port its access guard listens on, the guard, and whether the control plane has the port */
  hostPort?: number;
  guard?: AccessGuard;
  /** set once the guard listens */
  guarding?: boolean;
  announced?: boolean;
}

/** Host ports tried for a replica's guard before it is reported unhealthy (another process may hold one). */
const GUARD_PORT_TRIES = 5;

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
      /** host ports the access guards listen on, and where to report them (without: nothing is reachable from outside) */
      ports?: PortPool;
      /** the node address guards listen on (default: every address of the node; the secret guards each) */
      guardHost?: string;
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

  /**
   * Once the serving container runs: points its guard at the container's address and tells the
   * control plane the guard's port (retried each reconcile until it has it; again after a restart,
   * since the container's address may have changed).
   */
  private announce(s: Served) {
    const { reportAddress } = this.opts;
    const name = replicaContainerName(s.assignment);
    if (!reportAddress || !s.hostPort || !s.guard || !s.guarding || s.announced || s.stopping || !this.opts.launcher.isRunning(name))
      return;
    const address = this.opts.launcher.address(name);
    if (!address) return;
    s.guard.setTarget({ host: address, port: s.assignment.serving_port });
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
    if (this.opts.ports && !s.guard) this.guard(s, GUARD_PORT_TRIES);
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
      s.guard?.setTarget(null);
      const why = error ?? `exited with ${code}`;
      this.opts.log?.(`replica ${a.replica_id} serving container ${why}; reporting it unhealthy, restarting in ${restartAfterMs / 1000} s`);
      this.opts.logs.write(s.key, "stderr", `[gpuforge-agent] serving container ${why}; restarting in ${restartAfterMs / 1000} s\n`);
      void this.opts.reportUnhealthy(a, `serving container ${why}`).catch(() => {});
      s.restart = setTimeout(() => {
        if (this.served.get(a.replica_id) === s && !s.stopping) {
          this.served.delete(a.replica_id);
          // the fresh container keeps the guard and its host port: the gateway's address for it stays right
          this.start({ assignment: a, key: s.key, hostPort: s.hostPort, guard: s.guard, guarding: s.guarding });
        }
      }, restartAfterMs);
    });
    this.opts.log?.(`serving ${a.model} for replica ${a.replica_id} on GPUs ${devices.join(",")} in ${image}`);
  }

  /** Starts the replica's access guard on a free host port of the range (another one when a port is taken). */
  private guard(s: Served, tries: number) {
    const port = this.opts.ports!.take(1)?.[0];
    if (port === undefined) {
      void this.opts.reportUnhealthy(s.assignment, "no free host port left on this node for its access guard").catch(() => {});
      return;
    }
    const guard = new AccessGuard(s.assignment.access_secret, { label: `replica ${s.assignment.replica_id}` });
    Object.assign(s, { hostPort: port, guard, guarding: false });
    guard.listen(port, this.opts.guardHost).then(
      () => {
        if (s.guard !== guard || s.stopping) return guard.close();
        s.guarding = true;
        this.announce(s);
      },
      (e: Error) => {
        guard.close();
        if (s.guard !== guard || s.stopping) return;
        // the range said free, but another process holds it: that port stays marked taken
        this.opts.log?.(`replica ${s.assignment.replica_id}: host port ${port} could not be listened on (${e.message})`);
        Object.assign(s, { hostPort: undefined, guard: undefined });
        if (tries > 1) this.guard(s, tries - 1);
        else void this.opts.reportUnhealthy(s.assignment, `its access guard could not listen: ${e.message}`).catch(() => {});
      },
    );
  }

  private stop(id: string, s: Served, why: string) {
    s.stopping = true;
    s.guard?.close();
    if (s.hostPort) this.opts.ports?.release([s.hostPort]);
    if (s.restart) clearTimeout(s.restart);
    s.workload?.stop();
    this.opts.logs.close(s.key);
    this.served.delete(id);
    this.opts.log?.(`stopped replica ${id}: ${why}`);
  }
}
