// The scheduler's brain: a pure function from (free GPUs, queue, tenants' usage, running work)
// to decisions. No I/O; lib/scheduler/run-cycle.ts loads its input and writes its output in one
// transaction.
//
// Order: priority (1 first), then fair share among tenants of equal priority (the tenant using the
// smallest share of its quota goes first, re-evaluated after every placement), then age.
// Placement: gangs are whole (all of a job's GPUs or none); a job that fits on one node goes to the
// node with the fewest free GPUs that still fits it (best fit keeps whole nodes free for large
// jobs); a larger job spreads over as few nodes as possible. Only healthy GPUs on available nodes
// are offered as free, and work that runs an image or a command only on nodes that run containers.
// Backfill (EASY, per scope): a job's scope is the GPUs it could ever use: its GPU type, in its
// cluster when it is pinned to one, on container nodes when it runs an image or a command. The
// first job of a scope that does not fit becomes that scope's head and gets a reservation at its
// earliest start, computed from the declared duration_s of running work in the scope (work without
// one counts as running until it ends). A later job may start now only if, for every reservation
// whose scope holds GPUs it would take, it ends before that head's start or leaves enough of those
// GPUs for the head; a job that would delay a head tries GPUs outside that head's scope before it
// waits. So backfill never delays a head, and work on GPUs no waiting head could use never waits.
// A job whose scope has too few usable GPUs (healthy GPUs on available nodes, busy or not) for it
// to ever start, with every node that could host it in maintenance, quarantined, offline or
// draining, reserves nothing: it keeps its place and becomes a head again when capacity returns.
//
// Whole-node reservations (lib/reservations) own their nodes while active: a node in one is offered
// only to its tenant's work, which runs there "covered" (paid by the reservation, so outside the
// quota and outside the backfill bookkeeping above, which counts on-demand capacity only). A job
// that names its reservation runs only there, only while it is active and only if its declared
// duration ends before the reservation does; a job that names none tries its tenant's active
// reservations first (capacity already paid for), then on-demand nodes. A node booked by a future
// reservation takes only work whose declared duration ends before that reservation starts.
// Gangs that need more than one node go where the interconnect is best (./topology.ts).

import { TopoTree } from "./topology";

export interface FreeNode {
  nodeId: string;
  clusterId: string;
  gpuType: string;
  /** the node runs containers (tenant images and commands run nowhere else) */
  containers: boolean;
  /**
   * A Slurm cluster's node: its bridge runs batch jobs through Slurm, so no pod goes there, and a
   * gang over several nodes never mixes it with another cluster's nodes (Slurm runs a job in one cluster).
   */
  batchOnly?: boolean;
  freeGpuIds: string[];
  pod?: string | null;
  rack?: string | null;
  /** the node belongs to this active reservation now: only its tenant's work may use it */
  reservationId?: string;
  /** epoch ms when the next reservation of this node starts: work placed now must end by then */
  bookedFrom?: number;
  /** rented from a provider for this job only ('' while idle: for no one) (lib/burst) */
  dedicatedTo?: string;
}

/** A live reservation of a tenant whose work is in the queue (active now or starting later). */
export interface ActiveReservation {
  id: string;
  tenantId: string;
  startsAt: number;
  endsAt: number;
}

export interface QueuedJob {
  id: string;
  /** what the work is, for the reasons a tenant reads (a job unless said) */
  kind?: "job" | "pod";
  tenantId: string;
  gpuCount: number;
  gpuType: string;
  clusterId: string | null;
  /** it runs an image or a command: container nodes only */
  needsContainers: boolean;
  /** all of its GPUs on one node (a pod is one container), never a gang over several */
  singleNode?: boolean;
  priority: number;
  submittedAt: number;
  durationS: number | null;
  status: "queued" | "blocked";
  /** the reservation the job must run in (its tenant's own) */
  reservationId?: string | null;
}

export interface TenantUsage {
  quota: number;
  inUse: number;
}

export interface RunningWork {
  gpuType: string;
  clusterId: string;
  containers: boolean;
  batchOnly?: boolean;
  gpuCount: number;
  /** epoch ms when its declared duration ends; null when it declared none */
  endsAt: number | null;
}

/** Healthy GPUs of a type in a cluster on nodes that can take work now, free or busy. */
export interface Capacity {
  gpuType: string;
  clusterId: string;
  containers: boolean;
  batchOnly?: boolean;
  gpus: number;
}

export type Decision =
  | { jobId: string; outcome: "placed"; gpuIds: string[]; nodeIds: string[]; reservationId?: string }
  | { jobId: string; outcome: "blocked_quota"; reason: string }
  | { jobId: string; outcome: "pending"; reason: string };

/** The GPUs a job could ever use. */
interface Scope {
  gpuType: string;
  clusterId: string | null;
  containersOnly: boolean;
  /** a service (a pod): not on batch-only nodes */
  servicesOnly: boolean;
}

interface Reservation extends Scope {
  headId: string;
  headPriority: number;
  /** GPUs the head can count on at its start, minus what it needs (≥ 0 means the reservation holds) */
  spareAtStart: number;
  startsAt: number;
}

type Pick = Array<{ node: FreeNode; take: number }>;

const short = (id: string) => id.slice(0, 8);
const scopeOf = (j: QueuedJob): Scope => ({
  gpuType: j.gpuType,
  clusterId: j.clusterId,
  containersOnly: j.needsContainers,
  servicesOnly: j.kind === "pod",
});
const scopeKey = (s: Scope) => `${s.gpuType}\u0000${s.clusterId ?? "*"}\u0000${s.containersOnly ? "c" : "-"}${s.servicesOnly ? "s" : ""}`;
const inScope = (s: Scope, n: { gpuType: string; clusterId: string; containers: boolean; batchOnly?: boolean }) =>
  n.gpuType === s.gpuType &&
  (!s.clusterId || n.clusterId === s.clusterId) &&
  (!s.containersOnly || n.containers) &&
  (!s.servicesOnly || !n.batchOnly);

/**
 * A lower bound of the usable capacity: the free GPUs of the nodes no reservation holds now (each
 * one is usable capacity). Given it and no running work, `place` decides what it decides with the
 * whole facts whenever it starts every job and pod it was given: running work is consulted only to
 * reserve for a head that cannot start, and the capacity only to tell work that it is bigger than
 * the usable fleet, which work that starts on free GPUs of its scope never is. A cycle that starts
 * everything then skips reading both (lib/scheduler/run-cycle.ts).
 */
export function freeCapacity(nodes: readonly FreeNode[]): Capacity[] {
  return nodes
    .filter((n) => !n.reservationId)
    .map((n) => ({
      gpuType: n.gpuType,
      clusterId: n.clusterId,
      containers: n.containers,
      ...(n.batchOnly ? { batchOnly: true } : {}),
      gpus: n.freeGpuIds.length,
    }));
}

/** Every GPU scope `s` may use is in scope `r` too (r asks nothing s does not). */
const covers = (r: Scope, s: Scope) =>
  r.gpuType === s.gpuType &&
  (!r.clusterId || r.clusterId === s.clusterId) &&
  (!r.containersOnly || s.containersOnly) &&
  (!r.servicesOnly || s.servicesOnly);

export function place(input: {
  now: number;
  nodes: FreeNode[];
  queue: QueuedJob[];
  tenants: Map<string, TenantUsage>;
  running: RunningWork[];
  capacity: Capacity[];
  /** live reservations of the queue's tenants; nodes name theirs through reservationId */
  reservations?: ActiveReservation[];
}): Decision[] {
  const free = input.nodes.map((n) => ({ ...n, freeGpuIds: [...n.freeGpuIds] }));
  const usage = new Map([...input.tenants].map(([id, u]) => [id, { ...u }]));
  const running = [...input.running];
  const reservations = new Map<string, Reservation>();
  const decisions: Decision[] = [];

  const booked = new Map((input.reservations ?? []).map((r) => [r.id, r]));
  const reservedNodes = new Map<string, FreeNode[]>();
  for (const n of free) if (n.reservationId) reservedNodes.set(n.reservationId, [...(reservedNodes.get(n.reservationId) ?? []), n]);
  const pools = new FreePools(free.filter((n) => !n.reservationId && n.dedicatedTo === undefined));
  const rented = new Map<string, FreeNode[]>();
  for (const n of free) if (n.dedicatedTo) rented.set(n.dedicatedTo, [...(rented.get(n.dedicatedTo) ?? []), n]);
  for (const job of fairOrder(input.queue, usage)) {
    // a pod declares no end and is billed on demand: it never runs inside a reservation
    const inside = job.kind === "pod" ? {} : placeInReservation(job, booked, reservedNodes, input.now);
    if (inside.pick) {
      const gpuIds = inside.pick.flatMap((p) => p.node.freeGpuIds.splice(0, p.take));
      decisions.push({
        jobId: job.id,
        outcome: "placed",
        gpuIds,
        nodeIds: inside.pick.map((p) => p.node.nodeId),
        reservationId: inside.reservationId,
      });
      continue;
    }
    if (inside.wait) {
      decisions.push({ jobId: job.id, outcome: "pending", reason: inside.wait });
      continue;
    }
    const tenant = usage.get(job.tenantId) ?? { quota: 0, inUse: 0 };
    if (tenant.inUse + job.gpuCount > tenant.quota) {
      decisions.push({
        jobId: job.id,
        outcome: "blocked_quota",
        reason: `Quota: your organisation holds ${tenant.inUse} of its ${tenant.quota} GPUs; this ${job.kind ?? "job"} needs ${job.gpuCount}`,
      });
      continue;
    }
    // a job with a provider instance rented for it runs there, once its node has joined (lib/burst)
    const own = rented.get(job.id)?.filter((n) => n.gpuType === job.gpuType && (!job.needsContainers || n.containers));
    const ownPick = own?.length ? bestFit(own, job.gpuCount) : null;
    if (ownPick) {
      const gpuIds = ownPick.flatMap((p) => p.node.freeGpuIds.splice(0, p.take));
      tenant.inUse += job.gpuCount;
      usage.set(job.tenantId, tenant);
      decisions.push({ jobId: job.id, outcome: "placed", gpuIds, nodeIds: ownPick.map((p) => p.node.nodeId) });
      continue;
    }
    const scope = scopeOf(job);
    const where = `${job.clusterId ? ` in cluster ${short(job.clusterId)}` : ""}${job.needsContainers ? " on nodes that run containers" : ""}`;
    const usable = input.capacity.reduce((s, c) => s + (inScope(scope, c) ? c.gpus : 0), 0);
    if (usable < job.gpuCount) {
      decisions.push({
        jobId: job.id,
        outcome: "pending",
        reason:
          `Needs ${job.gpuCount} ${job.gpuType} GPUs${where}, but only ${usable} can take work: every other node that could host it is in maintenance, ` +
          `quarantined, offline or draining. It reserves nothing, keeps its place and starts when capacity returns.`,
      });
      continue;
    }
    const fit = chooseAroundReservations(pools, job, reservations, input.now);
    if (!fit.pick) {
      const available = pools.available(scope);
      const head = reservations.get(scopeKey(scope));
      if (fit.blockedBy) {
        decisions.push({
          jobId: job.id,
          outcome: "pending",
          reason: `Waiting behind job ${short(fit.blockedBy.headId)} (priority ${fit.blockedBy.headPriority}): starting now would delay it`,
        });
      } else if (!head) {
        reservations.set(scopeKey(scope), reserve(job, available, running, input.now));
        decisions.push({
          jobId: job.id,
          outcome: "pending",
          reason: `Needs ${job.gpuCount} free ${job.gpuType} GPUs${where}; ${available} free now. Capacity is reserved for it.`,
        });
      } else {
        decisions.push({
          jobId: job.id,
          outcome: "pending",
          reason: `Needs ${job.gpuCount} free ${job.gpuType} GPUs${where}; ${available} free, and waiting behind job ${short(head.headId)} (priority ${head.headPriority})`,
        });
      }
      continue;
    }
    for (const { reservation, impact } of fit.charges) reservation.spareAtStart -= impact;
    const gpuIds: string[] = [];
    const nodeIds: string[] = [];
    for (const p of fit.pick) {
      gpuIds.push(...pools.take(p.node, p.take));
      nodeIds.push(p.node.nodeId);
    }
    tenant.inUse += job.gpuCount;
    usage.set(job.tenantId, tenant);
    // a gang may span nodes of different clusters or kinds: each gets its share back when it ends
    for (const p of fit.pick) {
      running.push({
        gpuType: job.gpuType,
        clusterId: p.node.clusterId,
        containers: p.node.containers,
        ...(p.node.batchOnly ? { batchOnly: true } : {}),
        gpuCount: p.take,
        endsAt: job.durationS === null ? null : input.now + job.durationS * 1000,
      });
    }
    decisions.push({ jobId: job.id, outcome: "placed", gpuIds, nodeIds });
  }
  return decisions;
}

/** Work placed on a node booked by a future reservation must end (by its declared duration) before that reservation starts. */
const endsBeforeBooking = (n: FreeNode, job: QueuedJob, now: number) =>
  n.bookedFrom === undefined || (job.durationS !== null && now + job.durationS * 1000 <= n.bookedFrom);

/**
 * Covered placement: a job that names its reservation runs only there (or says why it waits); one
 * that names none tries its tenant's active reservations that outlast it, newest end first. An
 * unnamed job that finds no room inside returns neither a pick nor a reason and goes on demand.
 */
function placeInReservation(
  job: QueuedJob,
  booked: Map<string, ActiveReservation>,
  nodes: Map<string, FreeNode[]>,
  now: number,
): { pick?: Pick; reservationId?: string; wait?: string } {
  if (booked.size === 0) return {};
  const scope = scopeOf(job);
  const outlasts = (r: ActiveReservation) => job.durationS === null || now + job.durationS * 1000 <= r.endsAt;
  const tryIn = (r: ActiveReservation) =>
    bestFit(
      (nodes.get(r.id) ?? []).filter((n) => n.freeGpuIds.length > 0 && inScope(scope, n)),
      job.gpuCount,
    );
  if (job.reservationId) {
    const r = booked.get(job.reservationId);
    const name = `reservation ${short(job.reservationId)}`;
    if (!r || r.tenantId !== job.tenantId || r.endsAt <= now) return { wait: `Its ${name} has ended; the job cannot run` };
    if (r.startsAt > now) return { wait: `Waiting for its ${name} to start at ${new Date(r.startsAt).toISOString()}` };
    if (!outlasts(r)) return { wait: `Its declared duration would run past the end of its ${name} (${new Date(r.endsAt).toISOString()})` };
    const pick = tryIn(r);
    if (pick) return { pick, reservationId: r.id };
    const free = (nodes.get(r.id) ?? []).filter((n) => inScope(scope, n)).reduce((s, n) => s + n.freeGpuIds.length, 0);
    return { wait: `Needs ${job.gpuCount} free ${job.gpuType} GPUs in its ${name}; ${free} free there now` };
  }
  const mine = [...booked.values()]
    .filter((r) => r.tenantId === job.tenantId && r.startsAt <= now && r.endsAt > now && outlasts(r))
    .sort((a, b) => b.endsAt - a.endsAt || (a.id < b.id ? -1 : 1));
  for (const r of mine) {
    const pick = tryIn(r);
    if (pick) return { pick, reservationId: r.id };
  }
  return {};
}

/**
 * The job's best pick that delays no waiting head. A pick that would delay a head is tried again
 * without that head's GPUs (the job may fit elsewhere in its own scope); when nothing is left it
 * waits behind that head. Returns the reservations the pick draws on, or the head it waits behind.
 */
function chooseAroundReservations(
  pools: FreePools,
  job: QueuedJob,
  reservations: Map<string, Reservation>,
  now: number,
): { pick: Pick | null; charges: Array<{ reservation: Reservation; impact: number }>; blockedBy?: Reservation } {
  const avoid: Reservation[] = [];
  let blockedBy: Reservation | undefined;
  for (;;) {
    const found = pools.choose(scopeOf(job), job.gpuCount, avoid, job, now);
    // single-node work takes one node or waits (the pools offer a spread when no node fits alone)
    const pick = found && job.singleNode && found.length > 1 ? null : found;
    if (!pick) return { pick: null, charges: [], blockedBy };
    const charges: Array<{ reservation: Reservation; impact: number }> = [];
    let delays: Reservation | undefined;
    for (const r of reservations.values()) {
      if (r.gpuType !== job.gpuType) continue;
      const impact = pick.reduce((s, p) => s + (inScope(r, p.node) ? p.take : 0), 0);
      if (impact === 0) continue;
      // a head whose start is unknown (it waits on work that declared no end) may start any moment
      const endsBeforeHead = job.durationS !== null && Number.isFinite(r.startsAt) && now + job.durationS * 1000 <= r.startsAt;
      if (endsBeforeHead) continue;
      if (impact > r.spareAtStart) {
        delays = r;
        break;
      }
      charges.push({ reservation: r, impact });
    }
    if (!delays) return { pick, charges };
    blockedBy = delays;
    avoid.push(delays);
  }
}

interface Pool {
  /** by free GPU count: the nodes with that many free, smallest node id first (see Bucket) */
  buckets: Bucket[];
  nodes: FreeNode[];
  /** nodes a future reservation books: only for work that ends before it starts (never in the buckets) */
  booked: FreeNode[];
  /** the pool's nodes by pod and rack, kept current as GPUs are taken, for gangs of several nodes */
  tree?: TopoTree<FreeNode>;
  /** the same without batch-only nodes, for gangs over several clusters */
  across?: TopoTree<FreeNode>;
  /** free GPUs on all its nodes, kept current as GPUs are taken */
  free: number;
}

/**
 * Free GPUs per type (and per type on container nodes), with nodes bucketed by how many GPUs they
 * have free, so best fit is a few bucket lookups rather than a scan of every node (10,000 jobs ×
 * 1,250 nodes otherwise). Cluster-constrained jobs, jobs steering around a head, and jobs that
 * may use nodes a future reservation books filter the pool's nodes (the less common cases).
 */
class FreePools {
  private pools = new Map<string, Pool>();
  private memberOf = new Map<FreeNode, Pool[]>();
  private rank = new Map<FreeNode, number>();

  constructor(nodes: FreeNode[]) {
    // ties in best fit go to the smallest node id: each node's rank in that order, once
    const byId = [...nodes].sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
    for (let i = 0; i < byId.length; i++) this.rank.set(byId[i]!, i);
    for (const n of nodes) {
      const keys = n.containers ? [n.gpuType, `${n.gpuType}\u0000c`] : [n.gpuType];
      const pools = keys.map((k) => {
        let pool = this.pools.get(k);
        if (!pool) this.pools.set(k, (pool = { buckets: [], nodes: [], booked: [], free: 0 }));
        pool.free += n.freeGpuIds.length;
        if (n.bookedFrom !== undefined) {
          pool.booked.push(n);
        } else {
          pool.nodes.push(n);
          bucket(pool, n.freeGpuIds.length).add(n, this.rank.get(n)!);
        }
        return pool;
      });
      this.memberOf.set(n, pools);
    }
  }

  private poolFor(scope: Scope): Pool | undefined {
    return this.pools.get(scope.containersOnly ? `${scope.gpuType}\u0000c` : scope.gpuType);
  }

  available(scope: Scope): number {
    const pool = this.poolFor(scope);
    if (!pool) return 0;
    if (!scope.clusterId && !scope.servicesOnly) return pool.free;
    let sum = 0;
    for (const list of [pool.nodes, pool.booked]) for (const n of list) if (inScope(scope, n)) sum += n.freeGpuIds.length;
    return sum;
  }

  /** The job's pick in this scope; nodes a later reservation books only for the job when it ends before that (`job`, `now`). */
  choose(scope: Scope, need: number, avoid: readonly Scope[] = [], job?: QueuedJob, now = 0): Pick | null {
    const pool = this.poolFor(scope);
    // steering around a head whose GPUs are all of this job's: nothing is left, and filtering every
    // node to find that out for each job behind the head grew with jobs × nodes (1.5 s at 40,000 GPUs)
    if (!pool || avoid.some((r) => covers(r, scope))) return null;
    const usableBooked = pool.booked.length && job ? pool.booked.filter((n) => endsBeforeBooking(n, job, now)) : [];
    if (scope.clusterId || scope.servicesOnly || avoid.length || usableBooked.length) {
      const eligible = (n: FreeNode) =>
        n.freeGpuIds.length > 0 &&
        (!scope.clusterId || n.clusterId === scope.clusterId) &&
        (!scope.servicesOnly || !n.batchOnly) &&
        !avoid.some((r) => inScope(r, n));
      return bestFit([...pool.nodes, ...usableBooked].filter(eligible), need);
    }
    for (let k = need; k < pool.buckets.length; k++) {
      const best = pool.buckets[k]?.first(k);
      if (best) return [{ node: best, take: need }];
    }
    pool.tree ??= new TopoTree(pool.nodes, (n) => n.freeGpuIds.length);
    const inOne = pool.tree.pick(need, { oneCluster: true });
    if (inOne) return inOne;
    // a gang no one cluster can hold spans clusters, never a Slurm cluster's nodes (Slurm runs a job
    // in one cluster): that tree too is built once and kept current, where a fresh one for every
    // such gang grew with gangs × nodes (4.3 s of a cycle at 100,000 GPUs)
    pool.across ??= new TopoTree(
      pool.nodes.filter((n) => !n.batchOnly),
      (n) => n.freeGpuIds.length,
    );
    return pool.across.pick(need);
  }

  take(node: FreeNode, count: number): string[] {
    const pools = this.memberOf.get(node)!;
    // booked nodes live in no bucket and no tree: only the pool's total moves for them
    const booked = node.bookedFrom !== undefined;
    // its entry in the bucket it leaves goes stale (Bucket.first skips it)
    const taken = node.freeGpuIds.splice(0, count);
    for (const pool of pools) {
      pool.free -= taken.length;
      if (booked) continue;
      if (node.freeGpuIds.length > 0) bucket(pool, node.freeGpuIds.length).add(node, this.rank.get(node)!);
      pool.tree?.adjust(node, -taken.length);
      pool.across?.adjust(node, -taken.length);
    }
    return taken;
  }
}

function bucket(pool: Pool, k: number): Bucket {
  return (pool.buckets[k] ??= new Bucket());
}

/**
 * The nodes that have had k free GPUs, as a min-heap of their ranks (node id order), so the best
 * fit's tie-break is a heap top, not a scan of every node with k free (1,250 of them per 8-GPU job
 * at 10,000 GPUs). A node's free count only falls during a cycle, so an entry whose node has fewer
 * than k free now is stale for good and is dropped when it comes to the top.
 */
class Bucket {
  private heap: number[] = [];
  private nodes = new Map<number, FreeNode>();

  add(n: FreeNode, rank: number): void {
    this.nodes.set(rank, n);
    const h = this.heap;
    h.push(rank);
    for (let i = h.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (h[parent]! <= h[i]!) break;
      [h[parent], h[i]] = [h[i]!, h[parent]!];
      i = parent;
    }
  }

  /** The node with the smallest id that still has exactly k free GPUs. */
  first(k: number): FreeNode | undefined {
    const h = this.heap;
    while (h.length) {
      const n = this.nodes.get(h[0]!)!;
      if (n.freeGpuIds.length === k) return n;
      this.nodes.delete(h[0]!);
      const last = h.pop()!;
      if (h.length === 0) break;
      h[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l]! < h[m]!) m = l;
        if (r < h.length && h[r]! < h[m]!) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i]!, h[m]!];
        i = m;
      }
    }
    return undefined;
  }
}

/** Best fit on one node, or a gang over several where the interconnect is best; null when the gang cannot be whole. */
function bestFit(eligible: FreeNode[], need: number): Pick | null {
  let best: FreeNode | undefined;
  for (const n of eligible) {
    if (
      n.freeGpuIds.length >= need &&
      (!best || n.freeGpuIds.length < best.freeGpuIds.length || (n.freeGpuIds.length === best.freeGpuIds.length && n.nodeId < best.nodeId))
    )
      best = n;
  }
  if (best) return [{ node: best, take: need }];
  return multiNode(eligible, need);
}

/** A gang over several nodes: one pod when possible, then the fewest racks, then the fewest nodes (./topology.ts). */
function multiNode(eligible: FreeNode[], need: number): Pick | null {
  return (
    new TopoTree(
      eligible.filter((n) => n.freeGpuIds.length > 0),
      (n) => n.freeGpuIds.length,
    ).pick(need, { oneCluster: true }) ?? acrossClusters(eligible, need)
  );
}

/** A gang no one cluster can hold spans clusters, never a Slurm cluster's nodes (Slurm runs a job in one cluster). */
function acrossClusters(nodes: readonly FreeNode[], need: number): Pick | null {
  return new TopoTree(
    nodes.filter((n) => n.freeGpuIds.length > 0 && !n.batchOnly),
    (n) => n.freeGpuIds.length,
  ).pick(need);
}

/** When the head can start, from the declared ends of running work in its scope, and what is spare then. */
function reserve(head: QueuedJob, freeNow: number, running: RunningWork[], now: number): Reservation {
  const scope = scopeOf(head);
  const relevant = running.filter((r) => inScope(scope, r));
  const ending = relevant.filter((r) => r.endsAt !== null).sort((a, b) => a.endsAt! - b.endsAt!);
  const base = { headId: head.id, headPriority: head.priority, ...scope };
  let available = freeNow;
  for (const r of ending) {
    available += r.gpuCount;
    if (available >= head.gpuCount) return { ...base, startsAt: Math.max(now, r.endsAt!), spareAtStart: available - head.gpuCount };
  }
  // Not reachable from declared ends alone: it starts when work without a declared end finishes.
  const eventually = available + relevant.filter((r) => r.endsAt === null).reduce((s, r) => s + r.gpuCount, 0);
  return { ...base, startsAt: Number.POSITIVE_INFINITY, spareAtStart: Math.max(-1, eventually - head.gpuCount) };
}

/**
 * Priority groups in order; inside a group, repeatedly the job of the tenant with the smallest share
 * of its quota (then the oldest job, then the tenant that came first). The tenants wait in a heap:
 * the caller changes only the usage of the tenant whose job it was handed (placing it), so only that
 * tenant's place is looked at again. Scanning every tenant for every job made 40,000 jobs of 200
 * tenants cost 1.7 s of a cycle.
 */
export function* fairOrder(queue: QueuedJob[], usage: Map<string, TenantUsage>): Generator<QueuedJob> {
  const byPriority = new Map<number, QueuedJob[]>();
  for (const j of queue) {
    const group = byPriority.get(j.priority);
    if (group) group.push(j);
    else byPriority.set(j.priority, [j]);
  }
  const shareOf = (tenantId: string) => {
    const u = usage.get(tenantId);
    return u && u.quota > 0 ? u.inUse / u.quota : Infinity;
  };
  for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
    const perTenant = new Map<string, QueuedJob[]>();
    for (const j of byPriority.get(priority)!.sort((a, b) => a.submittedAt - b.submittedAt || (a.id < b.id ? -1 : 1))) {
      const list = perTenant.get(j.tenantId);
      if (list) list.push(j);
      else perTenant.set(j.tenantId, [j]);
    }
    const turns = new TenantTurns();
    let rank = 0;
    for (const [tenantId, jobs] of perTenant) turns.push({ tenantId, jobs, cursor: 0, rank: rank++, share: shareOf(tenantId) });
    for (let next = turns.pop(); next; next = turns.pop()) {
      yield next.jobs[next.cursor]!;
      next.cursor++;
      if (next.cursor < next.jobs.length) turns.push({ ...next, share: shareOf(next.tenantId) });
    }
  }
}

interface TenantTurn {
  tenantId: string;
  jobs: QueuedJob[];
  cursor: number;
  /** the tenant's order of first appearance: the last tie-break */
  rank: number;
  share: number;
}

/** A min-heap of tenants by share of quota, then the age of their next job, then rank. */
class TenantTurns {
  private h: TenantTurn[] = [];

  private static before(a: TenantTurn, b: TenantTurn): boolean {
    if (a.share !== b.share) return a.share < b.share;
    const ageA = a.jobs[a.cursor]!.submittedAt;
    const ageB = b.jobs[b.cursor]!.submittedAt;
    return ageA !== ageB ? ageA < ageB : a.rank < b.rank;
  }

  push(t: TenantTurn): void {
    const h = this.h;
    h.push(t);
    for (let i = h.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (!TenantTurns.before(h[i]!, h[parent]!)) break;
      [h[parent], h[i]] = [h[i]!, h[parent]!];
      i = parent;
    }
  }

  pop(): TenantTurn | undefined {
    const h = this.h;
    const top = h[0];
    const last = h.pop();
    if (h.length && last) {
      h[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && TenantTurns.before(h[l]!, h[m]!)) m = l;
        if (r < h.length && TenantTurns.before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i]!, h[m]!];
        i = m;
      }
    }
    return top;
  }
}
