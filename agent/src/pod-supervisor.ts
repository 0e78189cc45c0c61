// Pods on this node: each placement runs one long-lived container of the pod's image (its own
// entrypoint, for as long as the pod is assigned), on the placement's GPUs. Each of the pod's
// ports gets a host port the agent picks: SSH's 22, when the pod has a key, is published there by
// the container engine (the tenant's key is what guards it); every other port is reached only
// through the inference gateway, by the agent's access guard listening on its host port and
// forwarding requests that carry the pod's access secret (access-guard.ts). When it has one, the
// pod's SSH public key is installed:
// written by the agent to a file of its own (mode 0600) and mounted read-only as root's
// authorized_keys, and given as PUBLIC_KEY (the variable common pod images read). Nothing else of
// the agent's reaches the container. Once the container runs, the agent reports it running with
// its host ports; when the control plane stops assigning it, the agent stops it and reports it
// stopped; when it ends by itself, the agent reports it exited. Every report names the placement
// (attempt and fence), and a placement starts at most once on this node (the placement book).
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { PodAssignment } from "../../lib/fleet/assignments";
import { parseSshPublicKey } from "../../lib/pods/ssh-key";
import { AccessGuard } from "./access-guard";
import { ApiError } from "./client";
import { RefusedSpec, type Launcher, type ResourceLimits, type Workload } from "./container";
import type { LogSpool } from "./log-spool";
import { placementKey, type PlacementBook, type PlacementEntry } from "./placement-book";
import type { PortPool } from "./port-pool";

const podContainerName = (a: { pod_id: string; attempt: number }) => `gpuforge-pod-${a.pod_id}-${a.attempt}`;

/** The pod's SSH port, published for sshd, whom the tenant's key guards: 22 when the pod has a key. */
const isSshPort = (a: PodAssignment, containerPort: number) => containerPort === 22 && a.ssh_public_key !== undefined;

export type PodReport =
  | { attempt: number; fence: string; status: "running"; ports: Array<{ container_port: number; host_port: number }> }
  | { attempt: number; fence: string; status: "exited"; exit_code: number; error?: string }
  | { attempt: number; fence: string; status: "stopped" };

interface Live {
  entry: PlacementEntry;
  assignment: PodAssignment;
  workload?: Workload;
  /** host port for each container port */
  ports: Array<{ container_port: number; host_port: number }>;
  /** the access guards of its ports other than SSH's, once they all listen */
  guards: AccessGuard[];
  guarding: boolean;
  reportedRunning: boolean;
  stopping?: "unassigned" | "interrupted";
  reason?: string;
}

export interface PodSupervisorOptions {
  launcher: Launcher;
  logs: LogSpool;
  book: PlacementBook;
  ports: PortPool;
  /** where the agent keeps each pod placement's authorized_keys */
  stateDir: string;
  gpuIndexOf: (gpuId: string) => number | undefined;
  limits: (gpus: number) => ResourceLimits;
  /** the node address host ports listen on (default: all of the node's) */
  publishIp?: string;
  /** the node address the access guards listen on (default: every address of the node; the secret guards each) */
  guardHost?: string;
  /** POSTs a report to the pod's status_path; throws ApiError on a refusal */
  send: (statusPath: string, report: PodReport) => Promise<void>;
  log?: (m: string) => void;
}

export class PodSupervisor {
  private live = new Map<string, Live>();
  /** reports not delivered yet, by placement key (a refusal drops one; a network failure keeps it) */
  private unsent = new Map<string, { path: string; report: PodReport }>();

  constructor(private readonly opts: PodSupervisorOptions) {}

  get running(): string[] {
    return [...this.live.keys()];
  }

  /** Host ports in use by pods here (the replica supervisor picks around them). */
  hostPorts(): number[] {
    return [...this.live.values()].flatMap((l) => l.ports.map((p) => p.host_port));
  }

  hasUnsent(key: string): boolean {
    return this.unsent.has(key);
  }

  /** Starts what is assigned and was never started here; stops what runs and is no longer assigned; reports containers that came up. */
  reconcile(assignments: PodAssignment[]): void {
    const wanted = new Map(assignments.map((a) => [placementKey(a), a]));
    for (const [key, l] of this.live) if (!wanted.has(key)) this.stop(key, l, "unassigned", "no longer assigned to this node");
    for (const [key, a] of wanted) {
      const l = this.live.get(key);
      if (l) this.announce(key, l);
      else if (!this.opts.book.has(key)) this.start(key, a);
    }
  }

  /** After an agent restart: containers of pods the book says run here are followed again; lost ones are reported exited. */
  resume(assignments: PodAssignment[]): void {
    const byKey = new Map(assignments.map((a) => [placementKey(a), a]));
    for (const e of this.opts.book.list("running")) {
      if (e.kind !== "pod" || this.live.has(e.key) || !e.container) continue;
      const a = byKey.get(e.key);
      const workload = this.opts.launcher.adopt(e.container, e.startedAt);
      if (!workload || !a) {
        if (a)
          this.queue(a.status_path, e.key, {
            attempt: e.attempt,
            fence: e.fence,
            status: "exited",
            exit_code: -1,
            error: "the container was lost while the node agent restarted",
          });
        if (workload) workload.stop();
        this.opts.book.ended(e.key, "finished");
        continue;
      }
      this.follow(e.key, this.guarded(e, a, e.ports ?? []), workload);
    }
  }

  /** A pod's live record with an access guard starting on the host port of each port that is not its SSH port. */
  private guarded(entry: PlacementEntry, a: PodAssignment, ports: Array<{ container_port: number; host_port: number }>): Live {
    const l: Live = { entry, assignment: a, ports, guards: [], guarding: false, reportedRunning: false };
    const guardedPorts = ports.filter((p) => !isSshPort(a, p.container_port));
    l.guards = guardedPorts.map(() => new AccessGuard(a.access_secret, { label: `pod ${a.pod_name}` }));
    Promise.all(l.guards.map((g, i) => g.listen(guardedPorts[i]!.host_port, this.opts.guardHost))).then(
      () => {
        if (l.stopping) return;
        l.guarding = true;
        this.announce(entry.key, l);
      },
      (e: Error) => {
        // a port of the range someone else holds: the pod cannot serve as asked, so it ends here
        this.opts.log?.(`pod ${a.pod_id} attempt ${a.attempt}: its access guards could not listen (${e.message}); stopping it`);
        l.reason = `its ports could not be opened on the node: ${e.message}`;
        this.stop(entry.key, l, "interrupted", l.reason);
      },
    );
    return l;
  }

  /** The agent's lease lapsed: the control plane has taken its pods away; they stop here and are reported interrupted. */
  interruptAll(reason: string): void {
    for (const [key, l] of this.live) this.stop(key, l, "interrupted", reason);
  }

  /** Between heartbeats: reports containers that came up since, and sends what waits. */
  async tick(): Promise<void> {
    for (const [key, l] of this.live) this.announce(key, l);
    await this.flush();
  }

  /** Sends the reports waiting; keeps those the control plane could not be reached for. */
  async flush(): Promise<void> {
    for (const [key, { path: statusPath, report }] of [...this.unsent]) {
      try {
        await this.opts.send(statusPath, report);
        this.unsent.delete(key);
      } catch (e) {
        if (!(e instanceof ApiError)) return;
        // 409: the control plane moved on (this placement is stale); 4xx: never acceptable
        this.opts.log?.(`pod report ${report.status} of ${key} refused (HTTP ${e.status}); dropped`);
        this.unsent.delete(key);
      }
    }
  }

  private start(key: string, a: PodAssignment) {
    const entryBase = { key, kind: "pod" as const, id: a.pod_id, attempt: a.attempt, fence: a.fence, container: podContainerName(a) };
    const refuse = (why: string) => {
      this.opts.log?.(`pod ${a.pod_id} attempt ${a.attempt} refused: ${why}`);
      const entry = this.opts.book.started(entryBase);
      this.opts.logs.open(key, { path: a.logs_path, attempt: a.attempt, fence: a.fence });
      this.opts.logs.write(key, "stderr", `[gpuforge-agent] not started: ${why}\n`);
      this.opts.logs.close(key);
      this.queue(a.status_path, key, {
        attempt: entry.attempt,
        fence: entry.fence,
        status: "exited",
        exit_code: 125,
        error: `not started: ${why}`,
      });
      this.opts.book.ended(key, "finished");
    };
    const devices = a.gpu_ids.map((id) => this.opts.gpuIndexOf(id)).filter((i): i is number => i !== undefined);
    if (devices.length !== a.gpu_ids.length || devices.length === 0) return refuse("the assignment names GPUs this node does not have");
    if (a.ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65_535)) return refuse("the assignment names a port that is not one");
    let key_: string | null = null;
    if (a.ssh_public_key !== undefined) {
      const check = parseSshPublicKey(a.ssh_public_key);
      if (!check.ok) return refuse(`the SSH key is not one OpenSSH public key line (${check.reason})`);
      key_ = check.key;
    }
    const hostPorts = this.opts.ports.take(a.ports.length);
    if (!hostPorts) return refuse("no free host ports left on this node");
    const ports = a.ports.map((container_port, i) => ({ container_port, host_port: hostPorts[i]! }));
    const keyDir = path.join(this.opts.stateDir, "pods", `${a.pod_id}-${a.attempt}`);
    try {
      if (key_) {
        mkdirSync(keyDir, { recursive: true, mode: 0o700 });
        writeFileSync(path.join(keyDir, "authorized_keys"), `${key_}\n`, { mode: 0o600 });
        chmodSync(path.join(keyDir, "authorized_keys"), 0o600);
      }
    } catch (e) {
      this.opts.ports.release(hostPorts);
      return refuse(`its SSH key could not be written: ${(e as Error).message}`);
    }
    const entry = this.opts.book.started({ ...entryBase, ports });
    this.opts.logs.open(key, { path: a.logs_path, attempt: a.attempt, fence: a.fence });
    let workload: Workload;
    try {
      workload = this.opts.launcher.start({
        name: podContainerName(a),
        image: a.image,
        gpus: devices,
        env: { GPUFORGE_POD_ID: a.pod_id, GPUFORGE_POD_NAME: a.pod_name, ...(key_ ? { PUBLIC_KEY: key_ } : {}) },
        labels: { "gpuforge.pod": a.pod_id, "gpuforge.attempt": String(a.attempt) },
        limits: this.opts.limits(devices.length),
        publish: ports
          .filter((p) => isSshPort(a, p.container_port))
          .map((p) => ({
            hostPort: p.host_port,
            containerPort: p.container_port,
            ...(this.opts.publishIp ? { hostIp: this.opts.publishIp } : {}),
          })),
        ...(key_ ? { mounts: [{ source: path.join(keyDir, "authorized_keys"), target: "/root/.ssh/authorized_keys" }] } : {}),
      });
    } catch (e) {
      this.opts.ports.release(hostPorts);
      this.opts.book.ended(key, "finished");
      this.opts.logs.close(key);
      this.queue(a.status_path, key, {
        attempt: a.attempt,
        fence: a.fence,
        status: "exited",
        exit_code: 125,
        error: `not started: ${e instanceof RefusedSpec ? e.message : (e as Error).message}`,
      });
      return;
    }
    this.opts.log?.(
      `started pod ${a.pod_name} (${a.pod_id}) attempt ${a.attempt} on GPUs ${devices.join(",")} in ${a.image}, ports ${ports.map((p) => `${p.host_port}→${p.container_port}`).join(" ") || "none"}`,
    );
    this.follow(key, this.guarded(entry, a, ports), workload);
  }

  private follow(key: string, l: Live, workload: Workload) {
    l.workload = workload;
    this.live.set(key, l);
    this.opts.ports.claim(l.ports.map((p) => p.host_port));
    workload.onOutput((stream, data) => this.opts.logs.write(key, stream, data));
    workload.onExit((code, error) => this.ended(key, code, error));
    this.announce(key, l);
  }

  /** Reports the container running with its host ports, once it is and its guards forward to it. */
  private announce(key: string, l: Live) {
    if (l.reportedRunning || l.stopping || !l.guarding || !this.opts.launcher.isRunning(l.entry.container!)) return;
    if (l.guards.length) {
      const address = this.opts.launcher.address(l.entry.container!);
      if (!address) return;
      const guardedPorts = l.ports.filter((p) => !isSshPort(l.assignment, p.container_port));
      l.guards.forEach((g, i) => g.setTarget({ host: address, port: guardedPorts[i]!.container_port }));
    }
    l.reportedRunning = true;
    this.queue(l.assignment.status_path, key, { attempt: l.entry.attempt, fence: l.entry.fence, status: "running", ports: l.ports });
  }

  private ended(key: string, exitCode: number, error?: string) {
    const l = this.live.get(key);
    if (!l) return;
    this.live.delete(key);
    for (const g of l.guards) g.close();
    this.opts.logs.close(key);
    this.opts.launcher.remove(l.entry.container!);
    this.opts.ports.release(l.ports.map((p) => p.host_port));
    rmSync(path.join(this.opts.stateDir, "pods", `${l.entry.id}-${l.entry.attempt}`), { recursive: true, force: true });
    const ref = { attempt: l.entry.attempt, fence: l.entry.fence };
    if (l.stopping === "unassigned") this.queue(l.assignment.status_path, key, { ...ref, status: "stopped" });
    else
      this.queue(l.assignment.status_path, key, {
        ...ref,
        status: "exited",
        exit_code: exitCode,
        ...(l.stopping ? { error: l.reason } : error ? { error } : {}),
      });
    this.opts.book.ended(key, l.stopping === "unassigned" ? "stopped" : "finished");
  }

  private stop(key: string, l: Live, why: "unassigned" | "interrupted", reason: string) {
    if (l.stopping) return;
    l.stopping = why;
    l.reason = reason;
    this.opts.log?.(`stopping pod ${l.assignment.pod_name} (${l.entry.id}) attempt ${l.entry.attempt}: ${reason}`);
    if (l.workload) l.workload.stop();
    else this.ended(key, -1);
  }

  private queue(statusPath: string, key: string, report: PodReport) {
    // a newer report of the same placement replaces an older one not sent yet (stopped after running, say)
    this.unsent.set(key, { path: statusPath, report });
  }
}
