// The Slurm bridge: an agent for a whole Slurm cluster. Each cycle it looks at Slurm once
// (./snapshot.ts), renews its claim to run the cluster, registers and heartbeats every Slurm node
// with a GPU through the node agent's routes (its Slurm state, reason and foreign load), drains and
// resumes nodes as GPUForge asks (only its own drains), and runs the placements the heartbeats
// assign as sbatch jobs on exactly the chosen nodes. It follows each one's Slurm state into fenced
// reports (state, then exit), its output files into log chunks, and cancels with scancel what is no
// longer assigned. GPUForge places; Slurm runs.
//
// Invariants, as the node agent's: a placement is submitted at most once in the book's life (its
// entry is on disk before sbatch runs); its outcome is on disk before the bridge lets go of it; a
// cycle whose look at Slurm failed, or was not wholly readable, reports nothing from it; a job is
// cancelled as unassigned only when every node's heartbeat answered this cycle and none listed it;
// and when no heartbeat has got through for the lease, the bridge cancels its jobs (the control
// plane has moved them by then).
import { existsSync, openSync, readSync, closeSync, statSync } from "node:fs";
import type { HeartbeatReply, JobAssignment } from "../../../lib/fleet/assignments";
import { endReport, jobPhase, normaliseJobState } from "../../../lib/slurm/job-state";
import { parseSlurmNodeState, readSlurmNode } from "../../../lib/slurm/node-state";
import { planSubmission, type ChosenNode, type PartitionFacts } from "../../../lib/slurm/submission";
import { ApiError, type Client } from "../client";
import { Lease } from "../lease";
import type { LogSpool } from "../log-spool";
import { placementKey } from "../placement-book";
import type { SlurmBook, SlurmPlacement } from "./book";
import { SlurmToolError, type SlurmTools } from "./cli";
import { foreignLoad, gpusOf, partitionPicture, registration, registrationSignature, slurmSection, type GpuNaming } from "./mirror";
import {
  parseJobDetail,
  parseSubmitted,
  placementComment,
  readPlacementComment,
  type QueueJob,
  type SlurmConfig,
  type SlurmNode,
} from "./parse";
import type { ReportQueue } from "./reports";
import { buildSubmission, type ContainerSupport } from "./script";
import { readConfig, takeSnapshot, type Snapshot } from "./snapshot";

export interface BridgeOptions {
  tools: SlurmTools;
  /** the control plane (reports, registrations) */
  client: Client;
  /** heartbeats (the ingest server when configured) */
  hot: Client;
  book: SlurmBook;
  reports: ReportQueue;
  logs: LogSpool;
  baseUrl: string;
  bridgeId: string;
  host: string;
  version: string;
  /** the Unix user the bridge submits as: its own jobs are that user's */
  user: string;
  outputDir: string;
  container: ContainerSupport;
  naming: GpuNaming;
  /** the partitions GPUForge may submit to (all when empty) */
  partitions: string[];
  /** a placement Slurm has not started this long after its submission is given back */
  pendingTimeoutS: number;
  heartbeatConcurrency: number;
  /** PATH for the batch scripts (where srun is) */
  toolPath: string;
  log: (m: string) => void;
  now?: () => number;
}

interface Mirrored {
  nodeId: string;
  gpus: Array<{ id: string; index: number }>;
  signature: string;
}

type Reply = HeartbeatReply & { slurm?: { drain: boolean | null; reason: string | null } };

export interface CycleSummary {
  ok: boolean;
  reason?: string;
  standby?: boolean;
  nodes: number;
  heartbeats: number;
  submitted: number;
  cancelled: number;
  reported: number;
}

const MAX_LOG_READ = 4 * 1024 * 1024;
const SUBMITTING_GRACE_MS = 60_000;

export class SlurmBridge {
  private clusterId?: string;
  private config?: SlurmConfig;
  private mirrored = new Map<string, Mirrored>();
  private lease: Lease;
  private standby = false;
  private said = new Set<string>();
  private assigned = new Set<string>();
  /** when each Slurm job was last cancelled here: a cancel is asked again only after a while */
  private cancelled = new Map<string, number>();

  constructor(private readonly o: BridgeOptions) {
    this.lease = new Lease(this.now());
  }

  private now() {
    return this.o.now?.() ?? Date.now();
  }

  /** Logs a message once (until `again` lets it be said again). */
  private once(key: string, m: string) {
    if (this.said.has(key)) return;
    this.said.add(key);
    this.o.log(m);
  }

  private again(prefix: string) {
    for (const k of [...this.said]) if (k.startsWith(prefix)) this.said.delete(k);
  }

  /** The cluster this key runs, and Slurm's configuration; refuses a cluster that is not of kind slurm. */
  async start(): Promise<{ clusterId: string; config: SlurmConfig }> {
    const clusters = await this.o.client.call<{ data: Array<{ id: string; name: string; kind: string }> }>("GET", "/api/clusters");
    const cluster = clusters.data[0];
    if (!cluster) throw new Error("this agent key sees no cluster");
    if (cluster.kind !== "slurm")
      throw new Error(
        `cluster ${cluster.name} is of kind ${cluster.kind}: the Slurm bridge runs a cluster of kind slurm (create one with kind "slurm")`,
      );
    this.clusterId = cluster.id;
    this.config = await readConfig(this.o.tools);
    if (!this.config.clusterName) throw new Error("scontrol show config named no ClusterName: is SLURM_CONF right?");
    return { clusterId: cluster.id, config: this.config };
  }

  async cycle(): Promise<CycleSummary> {
    const summary: CycleSummary = { ok: true, nodes: 0, heartbeats: 0, submitted: 0, cancelled: 0, reported: 0 };
    if (!this.clusterId || !this.config) await this.start();
    const taken = await takeSnapshot(this.o.tools, this.now());
    if (!taken.ok) {
      this.once("snapshot", `Slurm could not be read, so nothing is reported this cycle: ${taken.reason}`);
      await this.selfFence();
      return { ...summary, ok: false, reason: taken.reason };
    }
    this.again("snapshot");
    const snap = taken.snapshot;
    for (const s of snap.skipped) this.once(`skip:${s}`, `skipped an unreadable line: ${s}`);
    const gpuNodes = snap.nodes.filter((n) => gpusOf(n, this.o.naming).length > 0 && this.inScope(n));
    summary.nodes = gpuNodes.length;

    if (!(await this.claim(snap, gpuNodes))) return { ...summary, standby: true };
    summary.reported += (await this.o.reports.flush(this.o.client)).sent;
    await this.o.logs.flush(this.o.client);

    const ours = this.ourJobs(snap);
    const replies = await this.mirror(snap, gpuNodes, ours);
    summary.heartbeats = [...replies.values()].filter(Boolean).length;
    const complete = gpuNodes.length > 0 && summary.heartbeats === gpuNodes.length;
    const leaseS = [...replies.values()].find((r) => r)?.lease_s;
    if (summary.heartbeats > 0 && this.lease.renew(this.now(), leaseS)) this.o.log("heartbeats get through again");

    await this.drains(snap, gpuNodes, replies);
    const wanted = this.wanted(replies);
    if (complete) this.assigned = new Set(wanted.keys());
    summary.reported += await this.follow(snap, ours, complete ? wanted : null);
    if (complete) {
      summary.cancelled += await this.cancelUnassigned(snap, ours, wanted);
      summary.submitted += await this.submitNew(snap, gpuNodes, wanted, replies);
    }
    await this.selfFence();
    summary.reported += (await this.o.reports.flush(this.o.client)).sent;
    await this.o.logs.flush(this.o.client);
    this.o.book.forget(this.assigned, (k) => this.o.reports.has(k) || this.o.logs.has(k));
    return summary;
  }

  private inScope(n: SlurmNode) {
    return this.o.partitions.length === 0 || n.partitions.some((p) => this.o.partitions.includes(p));
  }

  /** The cluster's Slurm picture, and the claim to be its one active bridge (false: another runs it). */
  private async claim(snap: Snapshot, gpuNodes: SlurmNode[]): Promise<boolean> {
    const gpus = new Map(gpuNodes.map((n) => [n.name, gpusOf(n, this.o.naming).length]));
    try {
      await this.o.client.call(
        "PUT",
        `/api/clusters/${this.clusterId}/slurm`,
        {
          bridge_id: this.o.bridgeId,
          bridge_host: this.o.host,
          bridge_version: this.o.version,
          slurm_cluster_name: this.config!.clusterName,
          slurm_version: this.config!.version ?? "unknown",
          container_mode: this.o.container.mode,
          settings: {
            min_job_age_s: this.config!.minJobAgeS,
            slurmd_timeout_s: this.config!.slurmdTimeoutS,
            select_type: this.config!.selectType,
            accounting_storage: this.config!.accountingStorage,
            user: this.o.user,
          },
          partitions: partitionPicture(
            snap.partitions.filter((p) => this.o.partitions.length === 0 || this.o.partitions.includes(p.name)),
            gpus,
          ),
        },
        30_000,
      );
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) {
        if (!this.standby)
          this.o.log(`standing by: ${(e.body as { error?: { message?: string } })?.error?.message ?? "another bridge runs this cluster"}`);
        this.standby = true;
        return false;
      }
      throw e;
    }
    if (this.standby) this.o.log("this bridge now runs the cluster");
    this.standby = false;
    return true;
  }

  /**
   * Our Slurm jobs, by placement key: those in the book, and live ones that are ours by user and
   * comment but that the book lost (an ended one it has forgotten is nothing to do).
   */
  private ourJobs(snap: Snapshot): Map<string, QueueJob[]> {
    const out = new Map<string, QueueJob[]>();
    for (const j of snap.jobs) {
      const known = this.o.book.bySlurmId(j.leader);
      let key = known?.key;
      if (!key) {
        const ref = j.user === this.o.user ? readPlacementComment(j.comment) : null;
        if (!ref || jobPhase(j.state) === "ended") continue;
        key = `job:${ref.jobId}:${ref.attempt}:${ref.fence}`;
        const entry = this.o.book.get(key);
        // another Slurm job naming a placement the book has under another id is not ours
        if (entry?.slurmJobId && entry.slurmJobId !== j.leader) continue;
      }
      out.set(key, [...(out.get(key) ?? []), j]);
    }
    return out;
  }

  /** Registers what is new or changed, then heartbeats every node, a few at a time. */
  private async mirror(snap: Snapshot, nodes: SlurmNode[], ours: Map<string, QueueJob[]>): Promise<Map<string, Reply | null>> {
    const replies = new Map<string, Reply | null>();
    const holding = new Map<string, number>();
    for (const [key, jobs] of ours) {
      const e = this.o.book.get(key);
      if (!e || !jobs.some((j) => jobPhase(j.state) === "running")) continue;
      for (const [node, n] of Object.entries(e.gpusByNode)) holding.set(node, (holding.get(node) ?? 0) + n);
    }
    const isOurs = (j: QueueJob) =>
      this.o.book.bySlurmId(j.leader) !== undefined || (j.user === this.o.user && readPlacementComment(j.comment) !== null);
    const queue = [...nodes];
    const work = async () => {
      for (let n = queue.shift(); n; n = queue.shift()) {
        try {
          const node = await this.register(n, snap);
          const reply = await this.o.hot.call<Reply>(
            "POST",
            `/api/clusters/nodes/${node.nodeId}/heartbeat`,
            {
              slurm: {
                ...slurmSection(n),
                foreign: foreignLoad(n.name, snap.gresUsed.get(n.name), holding.get(n.name) ?? 0, snap.jobs, isOurs).slice(0, 256),
              },
            },
            20_000,
          );
          replies.set(n.name, reply);
          this.again(`beat:${n.name}`);
        } catch (e) {
          replies.set(n.name, null);
          if (e instanceof ApiError && e.status === 404) this.mirrored.delete(n.name); // removed meanwhile: register again
          this.once(`beat:${n.name}`, `node ${n.name}: ${(e as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.o.heartbeatConcurrency) }, work));
    return replies;
  }

  private async register(n: SlurmNode, snap: Snapshot): Promise<Mirrored> {
    const body = registration(n, {
      clusterName: this.config!.clusterName!,
      naming: this.o.naming,
      partitions: snap.partitions,
      containers: { on: this.o.container.mode !== "none", runtime: containerRuntime(this.o.container) },
      version: this.o.version,
    });
    const signature = registrationSignature(body);
    const known = this.mirrored.get(n.name);
    if (known && known.signature === signature) return known;
    const r = await this.o.client.call<{ node: { id: string }; gpus: Array<{ id: string; index: number; status: string }> }>(
      "POST",
      "/api/clusters/nodes",
      body,
      30_000,
    );
    const m = {
      nodeId: r.node.id,
      gpus: r.gpus.filter((g) => g.status !== "missing").map((g) => ({ id: g.id, index: g.index })),
      signature,
    };
    if (!known) this.o.log(`mirrored Slurm node ${n.name} as node ${r.node.id} with ${m.gpus.length} GPU(s)`);
    this.mirrored.set(n.name, m);
    return m;
  }

  /** GPUForge's drains made in Slurm, and lifted again; never a drain of Slurm's admins. */
  private async drains(snap: Snapshot, nodes: SlurmNode[], replies: Map<string, Reply | null>) {
    for (const n of nodes) {
      const want = replies.get(n.name)?.slurm;
      if (!want || want.drain === null) continue;
      const reading = readSlurmNode(parseSlurmNodeState(n.state), n.reason);
      try {
        if (want.drain && want.reason && (!reading.drained || (reading.drainedByUs && n.reason !== want.reason))) {
          await this.o.tools.run("scontrol", ["update", `nodename=${n.name}`, "state=drain", `reason=${want.reason}`]);
          this.o.log(`drained ${n.name} in Slurm: ${want.reason}`);
        } else if (!want.drain && reading.drained && reading.drainedByUs) {
          await this.o.tools.run("scontrol", ["update", `nodename=${n.name}`, "state=resume"]);
          this.o.log(`resumed ${n.name} in Slurm (GPUForge returned it to service)`);
        }
      } catch (e) {
        this.o.log(`could not change ${n.name} in Slurm: ${(e as Error).message}`);
      }
    }
    void snap;
  }

  /** The placements the heartbeats assign, each with its GPUs on each node. */
  private wanted(replies: Map<string, Reply | null>): Map<string, Array<{ node: string; a: JobAssignment }>> {
    const out = new Map<string, Array<{ node: string; a: JobAssignment }>>();
    for (const [node, reply] of replies) {
      for (const a of reply?.assignments ?? []) {
        if (a.kind !== "job") continue; // the scheduler never puts pods or replicas on a Slurm cluster
        const key = placementKey(a);
        out.set(key, [...(out.get(key) ?? []), { node, a }]);
      }
    }
    return out;
  }

  /** Each placement's Slurm job: state changes reported, output shipped, its end reported once. */
  private async follow(snap: Snapshot, ours: Map<string, QueueJob[]>, wanted: Map<string, unknown> | null): Promise<number> {
    let reported = 0;
    // jobs of ours the book lost (a bridge whose state was wiped): adopted if still assigned, else cancelled
    for (const [key, jobs] of ours) {
      if (this.o.book.has(key)) {
        const e = this.o.book.get(key)!;
        if (e.phase === "submitting" && !e.slurmJobId) {
          this.o.book.update(key, { phase: "submitted", ...this.outputsOf(jobs[0]!.leader) });
          this.o.logs.open(key, { path: e.logsPath, attempt: e.attempt, fence: e.fence });
          this.o.log(`found Slurm job ${jobs[0]!.leader} of ${key} by its comment`);
        }
        continue;
      }
      const ref = readPlacementComment(jobs[0]!.comment)!;
      if (wanted && !wanted.has(key)) {
        await this.cancel(jobs[0]!.leader, `Slurm job ${jobs[0]!.leader} is of a placement no longer assigned (${key})`);
        continue;
      }
      if (!wanted) continue;
      this.o.log(`adopted Slurm job ${jobs[0]!.leader} of ${key}: the bridge's state had lost it`);
      this.o.book.add({
        key,
        jobId: ref.jobId,
        attempt: ref.attempt,
        fence: ref.fence,
        phase: "submitted",
        ...this.outputsOf(jobs[0]!.leader),
        gpusByNode: {},
        logsPath: `/api/jobs/${ref.jobId}/logs`,
        offsets: { stdout: 0, stderr: 0 },
        takenAt: new Date(this.now()).toISOString(),
      });
      this.o.logs.open(key, { path: `/api/jobs/${ref.jobId}/logs`, attempt: ref.attempt, fence: ref.fence });
    }
    for (const e of this.o.book.list("submitting", "submitted")) {
      const jobs = e.slurmJobId ? (ours.get(e.key) ?? snap.jobs.filter((j) => j.leader === e.slurmJobId)) : [];
      if (jobs.length === 0) {
        reported += await this.missing(e, snap);
        continue;
      }
      reported += await this.track(e, jobs);
    }
    return reported;
  }

  /** A placement's Slurm job is not in the queue: still being submitted, or gone before we saw it end. */
  private async missing(e: SlurmPlacement, snap: Snapshot): Promise<number> {
    if (!snap.jobsComplete) return 0; // a skipped line may be it: conclude nothing
    if (e.phase === "submitting") {
      if (this.now() - Date.parse(e.submittingSince ?? e.takenAt) < SUBMITTING_GRACE_MS) return 0;
      this.o.log(`${e.key}: sbatch was called but Slurm has no job with its comment; reporting it interrupted (never submitted twice)`);
      this.end(
        e,
        { status: "interrupted", exit_code: -1, error: "the Slurm bridge lost track of its submission: it was never run twice" },
        null,
      );
      return 1;
    }
    // the queue no longer lists it: ask scontrol for the job itself (it may have been purged)
    let detail = null;
    try {
      detail = parseJobDetail((await this.o.tools.run("scontrol", ["-o", "show", "job", e.slurmJobId!])).stdout);
    } catch (err) {
      if (!(err instanceof SlurmToolError) || !/Invalid job id/i.test(err.stderr)) return 0;
    }
    if (detail) return 0; // squeue missed it this time; next cycle
    if (e.cancel === "unassigned" || e.cancel === "stale") {
      this.o.book.update(e.key, { phase: "ended", endedAt: new Date(this.now()).toISOString() });
      this.o.logs.close(e.key);
      return 0;
    }
    this.end(
      e,
      {
        status: "interrupted",
        exit_code: -1,
        error: "Slurm forgot the job before the bridge saw how it ended (its MinJobAge passed); it runs again without spending a retry",
      },
      null,
    );
    return 1;
  }

  private async track(e: SlurmPlacement, jobs: QueueJob[]): Promise<number> {
    const state = combinedState(jobs);
    const phase = jobPhase(state);
    const lead = jobs.find((j) => j.id === j.leader) ?? jobs[0]!;
    const reason = phase === "waiting" ? lead.reason : null;
    const nodes = [...new Set(jobs.flatMap((j) => j.nodes))];
    let reported = 0;
    if (phase === "unknown") {
      this.once(
        `state:${e.key}:${state}`,
        `Slurm job ${e.slurmJobId} is in state ${state}, which this bridge does not know: it keeps following it`,
      );
      return 0;
    }
    if (phase === "running" || phase === "waiting") {
      if (phase === "running") this.tail(e);
      if (state !== e.lastState || reason !== (e.lastReason ?? null)) {
        const started = phase === "running" ? jobs.map((j) => j.startedAt).find(Boolean) : null;
        this.o.reports.add({
          key: e.key,
          kind: "state",
          method: "POST",
          path: `/api/jobs/${e.jobId}/slurm`,
          body: {
            attempt: e.attempt,
            fence: e.fence,
            state,
            slurm_job_id: e.slurmJobId,
            reason,
            ...(nodes.length ? { nodes: lead.nodesText && jobs.length === 1 ? lead.nodesText : nodes.join(",") } : {}),
            ...(lead.partition && /^[A-Za-z0-9._-]+$/.test(lead.partition) ? { partition: lead.partition.split(",")[0] } : {}),
            ...(lead.submittedAt ? { submitted_at: lead.submittedAt.toISOString() } : {}),
            ...(started ? { started_at: started.toISOString() } : {}),
          },
        });
        this.o.book.update(e.key, {
          lastState: state,
          lastReason: reason,
          ...(phase === "waiting" && !e.pendingSince ? { pendingSince: new Date(this.now()).toISOString() } : {}),
        });
        reported++;
      }
      if (phase === "waiting" && e.pendingSince && !e.cancel && this.now() - Date.parse(e.pendingSince) > this.o.pendingTimeoutS * 1000) {
        this.o.book.update(e.key, { cancel: "pending_timeout" });
        await this.cancel(e.slurmJobId!, `Slurm has not started ${e.key} in ${this.o.pendingTimeoutS} s (${reason ?? "no reason given"})`);
      }
      return reported;
    }
    // ended: Slurm's own account of how (exit code, start, end), its output to the last byte
    let detail = null;
    try {
      detail = parseJobDetail((await this.o.tools.run("scontrol", ["-o", "show", "job", e.slurmJobId!])).stdout);
    } catch {
      // purged between squeue and now: what squeue said is all there is
    }
    this.tail(e, true);
    const finalState = detail?.state ?? state;
    if (e.cancel === "unassigned" || e.cancel === "stale") {
      // the work was taken away: nothing to report, as the node agent reports nothing of work it stopped for that
      this.o.logs.close(e.key);
      this.o.book.update(e.key, { phase: "ended", lastState: finalState, endedAt: new Date(this.now()).toISOString() });
      return 0;
    }
    const startedAt = detail?.startedAt ?? jobs.map((j) => j.startedAt).find(Boolean) ?? null;
    const endedAt = detail?.endedAt ?? jobs.map((j) => j.endsAt).find(Boolean) ?? null;
    this.o.reports.add({
      key: e.key,
      kind: "state",
      method: "POST",
      path: `/api/jobs/${e.jobId}/slurm`,
      body: {
        attempt: e.attempt,
        fence: e.fence,
        state: normaliseJobState(finalState),
        slurm_job_id: e.slurmJobId,
        reason: detail?.reason && detail.reason !== "None" ? detail.reason : null,
        ...(detail?.exitCode ? { exit_code: detail.exitCode } : {}),
        ...(startedAt && startedAt.getTime() > 0 ? { started_at: startedAt.toISOString() } : {}),
        ...(endedAt && startedAt ? { ended_at: endedAt.toISOString() } : {}),
      },
    });
    const outcome =
      e.cancel === "pending_timeout"
        ? {
            status: "interrupted" as const,
            exit_code: -1,
            error: `Slurm did not start it on the chosen nodes within ${this.o.pendingTimeoutS} s (${e.lastReason ?? "pending"}); placed again without spending a retry`,
          }
        : e.cancel === "lease"
          ? { status: "interrupted" as const, exit_code: -1, error: "the Slurm bridge lost its lease and cancelled it" }
          : endReport(finalState, detail?.exitCode, detail?.reason);
    this.end(e, outcome, finalState);
    return 1;
  }

  /** The placement's outcome, queued after its last state report; its log closed. */
  private end(e: SlurmPlacement, outcome: { status: string; exit_code: number; error?: string }, state: string | null) {
    this.o.logs.close(e.key);
    this.o.reports.add({
      key: e.key,
      kind: "exit",
      method: "PATCH",
      path: `/api/jobs/${e.jobId}`,
      body: {
        status: outcome.status,
        exit_code: outcome.exit_code,
        ...(outcome.error ? { error: outcome.error.slice(0, 10_000) } : {}),
        attempt: e.attempt,
        fence: e.fence,
      },
    });
    this.o.book.update(e.key, { phase: "ended", ...(state ? { lastState: state } : {}), endedAt: new Date(this.now()).toISOString() });
    this.o.log(
      `${e.key} (Slurm job ${e.slurmJobId ?? "?"}) ended ${state ?? ""}: reported ${outcome.status}${outcome.error ? ` (${outcome.error})` : ""}`,
    );
  }

  /** A Slurm job of ours, and where its output goes (sbatch --output/--error). */
  private outputsOf(id: string) {
    return { slurmJobId: id, stdout: `${this.o.outputDir}/gpuforge-${id}.out`, stderr: `${this.o.outputDir}/gpuforge-${id}.err` };
  }

  /** New output of a placement's Slurm job, from its output files, into its log (all of it: `toEnd`). */
  private tail(e: SlurmPlacement, toEnd = false) {
    for (let i = 0; i < (toEnd ? 64 : 1); i++) if (!this.tailOnce(this.o.book.get(e.key) ?? e)) return;
  }

  private tailOnce(e: SlurmPlacement): boolean {
    const offsets = { ...e.offsets };
    for (const stream of ["stdout", "stderr"] as const) {
      const file = e[stream];
      if (!file || !existsSync(file)) continue;
      try {
        const size = statSync(file).size;
        if (size < offsets[stream]) offsets[stream] = 0; // truncated or replaced: from its start
        if (size === offsets[stream]) continue;
        const n = Math.min(size - offsets[stream], MAX_LOG_READ);
        const buf = Buffer.alloc(n);
        const fd = openSync(file, "r");
        try {
          readSync(fd, buf, 0, n, offsets[stream]);
        } finally {
          closeSync(fd);
        }
        this.o.logs.write(e.key, stream, buf);
        offsets[stream] += n;
      } catch (err) {
        this.once(`tail:${file}`, `cannot read ${file}: ${(err as Error).message}`);
      }
    }
    const moved = offsets.stdout !== e.offsets.stdout || offsets.stderr !== e.offsets.stderr;
    if (moved) this.o.book.update(e.key, { offsets });
    return moved;
  }

  private async cancel(slurmJobId: string, why: string): Promise<boolean> {
    const last = this.cancelled.get(slurmJobId);
    if (last !== undefined && this.now() - last < 30_000) return true;
    try {
      await this.o.tools.run("scancel", [slurmJobId]);
      this.cancelled.set(slurmJobId, this.now());
      this.o.log(`scancel ${slurmJobId}: ${why}`);
      return true;
    } catch (e) {
      this.o.log(`scancel ${slurmJobId} failed (${(e as Error).message}); trying again next cycle`);
      return false;
    }
  }

  /** What runs and is no longer assigned is cancelled (the control plane moved it, or its tenant cancelled it). */
  private async cancelUnassigned(snap: Snapshot, ours: Map<string, QueueJob[]>, wanted: Map<string, unknown>): Promise<number> {
    let n = 0;
    for (const e of this.o.book.list("preparing", "submitting", "submitted")) {
      if (wanted.has(e.key)) continue;
      if (e.phase === "preparing") {
        this.o.book.drop(e.key); // never reached Slurm
        continue;
      }
      if (e.cancel !== "unassigned") this.o.book.update(e.key, { cancel: "unassigned" });
      const jobs = ours.get(e.key) ?? [];
      if (!e.slurmJobId || (jobs.length && jobs.every((j) => jobPhase(j.state) === "ended"))) continue;
      if (e.cancelRequested && jobs.length === 0) continue;
      if (await this.cancel(e.slurmJobId, `${e.key} is no longer assigned`)) {
        this.o.book.update(e.key, { cancelRequested: true });
        n++;
      }
    }
    void snap;
    return n;
  }

  /** Placements assigned and never taken on: submitted now, each exactly once. */
  private async submitNew(
    snap: Snapshot,
    nodes: SlurmNode[],
    wanted: Map<string, Array<{ node: string; a: JobAssignment }>>,
    replies: Map<string, Reply | null>,
  ): Promise<number> {
    let n = 0;
    for (const [key, parts] of wanted) {
      const known = this.o.book.get(key);
      if (known && known.phase !== "preparing") continue;
      const a = parts[0]!.a;
      const gpusByNode = Object.fromEntries(parts.map((p) => [p.node, p.a.gpu_ids.length]));
      const e =
        known ??
        this.o.book.add({
          key,
          jobId: a.job_id,
          attempt: a.attempt,
          fence: a.fence,
          phase: "preparing",
          gpusByNode,
          logsPath: a.logs_path,
          offsets: { stdout: 0, stderr: 0 },
          takenAt: new Date(this.now()).toISOString(),
        });
      if (await this.submit(e, parts, snap, nodes)) n++;
    }
    void replies;
    return n;
  }

  private async submit(
    e: SlurmPlacement,
    parts: Array<{ node: string; a: JobAssignment }>,
    snap: Snapshot,
    nodes: SlurmNode[],
  ): Promise<boolean> {
    const a = parts[0]!.a;
    let answer: {
      submission: { account: string; gpu_type: string; duration_s: number | null; nodes: Array<{ hostname: string; gpu_ids: string[] }> };
    };
    try {
      answer = await this.o.client.call(
        "POST",
        `/api/jobs/${e.jobId}/slurm`,
        { attempt: e.attempt, fence: e.fence, state: "SUBMITTING" },
        30_000,
      );
    } catch (err) {
      if (err instanceof ApiError && err.status < 500 && err.status !== 408 && err.status !== 429) {
        this.o.log(`${e.key}: the control plane refused its submission (HTTP ${err.status}); not submitted`);
        this.o.book.drop(e.key);
      }
      return false;
    }
    // exactly what the heartbeats assign, node by node, or nothing this cycle
    const heard = new Map(parts.map((p) => [p.node, [...p.a.gpu_ids].sort().join(",")]));
    const told = new Map(answer.submission.nodes.map((x) => [x.hostname, [...x.gpu_ids].sort().join(",")]));
    if (heard.size !== told.size || [...told].some(([h, g]) => heard.get(h) !== g)) {
      this.once(
        `mismatch:${e.key}`,
        `${e.key}: its nodes differ between heartbeats and the control plane this cycle; submitting next cycle`,
      );
      return false;
    }
    const facts: PartitionFacts[] = snap.partitions.map((p) => ({
      name: p.name,
      state: p.state,
      isDefault: p.isDefault,
      nodes: p.nodes,
      maxTimeS: p.maxTimeS,
    }));
    const chosen: ChosenNode[] = [];
    for (const p of parts) {
      const node = nodes.find((x) => x.name === p.node);
      const gpus = node ? gpusOf(node, this.o.naming) : [];
      const gres = gpus.find((g) => g.gpuType === answer.submission.gpu_type);
      if (!node || !gres) return this.refuse(e, `node ${p.node} has no ${answer.submission.gpu_type} GPUs in Slurm`);
      chosen.push({
        name: node.name,
        gpus: p.a.gpu_ids.length,
        gresType: gres.gresType,
        cpus: node.cpus,
        memoryMb: node.memoryMb,
        gpusTotal: gpus.length,
      });
    }
    const duration = answer.submission.duration_s ?? a.duration_s ?? null;
    const plan = planSubmission(chosen, facts, duration, this.o.partitions);
    if (!plan.ok) return this.refuse(e, plan.reason);
    if (
      plan.components.length > 1 &&
      a.image &&
      this.o.container.mode === "oci" &&
      slurmMajor(this.config?.version) > 0 &&
      slurmMajor(this.config?.version) <= 22
    )
      return this.refuse(
        e,
        `its nodes hold different GPU counts (${plan.components.map((c) => `${c.nodes.join(",")} × ${c.gpusPerNode}`).join(" + ")}), which takes a heterogeneous job, and Slurm ${this.config?.version} cannot start a --container step across a heterogeneous job's components; a container wrapper (SLURM_CONTAINER=wrapper) or pyxis can`,
      );
    const built = buildSubmission({
      assignment: a,
      components: plan.components,
      durationS: duration,
      account: answer.submission.account,
      comment: placementComment(e.jobId, e.attempt, e.fence),
      jobName: `gf-${e.jobId.slice(0, 8)}-${e.attempt}`,
      outputDir: this.o.outputDir,
      container: this.o.container,
      baseUrl: this.o.baseUrl,
      path: this.o.toolPath,
      bundleExists: (dir) => existsSync(dir),
    });
    if (!built.ok) return this.refuse(e, built.reason);
    // on disk before sbatch runs: a crash from here on never submits it again
    this.o.book.update(e.key, { phase: "submitting", submittingSince: new Date(this.now()).toISOString() });
    let id: string | null = null;
    try {
      id = parseSubmitted((await this.o.tools.run("sbatch", built.submission.args, built.submission.script)).stdout);
    } catch (err) {
      const text = err instanceof SlurmToolError ? err.stderr : String(err);
      if (/Batch job submission failed/i.test(text) && !/temporarily|try again|timed out|Unable to contact/i.test(text)) {
        return this.refuse(
          e,
          `Slurm refused the submission: ${text
            .replace(/^sbatch: error:\s*/gim, "")
            .trim()
            .split("\n")
            .at(-1)}`,
        );
      }
      if (/Unable to contact|temporarily unavailable|Connection refused/i.test(text)) {
        // certainly not submitted: the controller never answered
        this.o.book.update(e.key, { phase: "preparing" });
        this.o.log(`${e.key}: Slurm's controller did not take the submission (${text.trim().split("\n").at(-1)}); trying again`);
        return false;
      }
      this.o.log(`${e.key}: sbatch gave no answer (${text.trim().split("\n").at(-1)}); looking for the job by its comment next cycle`);
      return false;
    }
    if (!id) {
      this.o.log(`${e.key}: sbatch printed no job id; looking for the job by its comment next cycle`);
      return false;
    }
    this.o.logs.open(e.key, { path: e.logsPath, attempt: e.attempt, fence: e.fence });
    this.o.book.update(e.key, { phase: "submitted", ...this.outputsOf(id) });
    this.o.log(
      `submitted ${e.key} as Slurm job ${id}: ${plan.components.map((c) => `${c.nodes.join(",")} × ${c.gpusPerNode} GPU in ${c.partition}`).join(" + ")}`,
    );
    return true;
  }

  /** A placement Slurm cannot run as placed: reported failed (its retries decide), never submitted. */
  private refuse(e: SlurmPlacement, why: string): false {
    this.o.log(`${e.key} not submitted: ${why}`);
    this.o.logs.open(e.key, { path: e.logsPath, attempt: e.attempt, fence: e.fence });
    this.o.logs.write(e.key, "stderr", `[gpuforge-slurm-bridge] not started: ${why}\n`);
    this.end(e, { status: "failed", exit_code: 125, error: `not started: ${why}` }, null);
    return false;
  }

  /** The lease lapsed (no heartbeat got through): the control plane has moved this work, so Slurm stops it. */
  private async selfFence() {
    if (!this.lease.lapsed(this.now())) return;
    const live = this.o.book.list("submitted", "submitting").filter((e) => e.slurmJobId);
    this.o.log(
      `no heartbeat reached the control plane for ${this.lease.silentForS(this.now())} s: cancelling ${live.length} Slurm job(s) it has moved elsewhere`,
    );
    for (const e of live) {
      if (!e.cancel) this.o.book.update(e.key, { cancel: "lease" });
      await this.cancel(e.slurmJobId!, "the bridge's lease lapsed");
    }
  }
}

/** One state for a job and its heterogeneous components: running while any runs, ended when all have. */
function combinedState(jobs: readonly QueueJob[]): string {
  const states = jobs.map((j) => normaliseJobState(j.state));
  const phases = states.map(jobPhase);
  if (phases.includes("unknown")) return states[phases.indexOf("unknown")]!;
  if (phases.includes("running")) return states[phases.indexOf("running")]!;
  if (phases.includes("waiting")) return states[phases.indexOf("waiting")]!;
  return states.find((s) => s !== "COMPLETED") ?? states[0]!;
}

/** Slurm's major version (22 for 22.05.8); 0 when unknown. */
function slurmMajor(version: string | null | undefined): number {
  const m = /^(\d+)\./.exec(version ?? "");
  return m ? Number(m[1]) : 0;
}

function containerRuntime(c: ContainerSupport): string {
  if (c.mode === "oci") return "slurm --container (oci.conf)";
  if (c.mode === "pyxis") return "slurm pyxis --container-image";
  if (c.mode === "wrapper") return `slurm wrapper ${c.wrapper ?? ""}`.trim().slice(0, 100);
  return "none";
}
