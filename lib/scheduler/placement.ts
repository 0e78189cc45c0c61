// The scheduler's brain: a pure function from (free GPUs, queue, tenants' usage, running work)
// to decisions. No I/O; lib/scheduler/run-cycle.ts loads its input and writes its output in one
// transaction.
//
// Order: priority (1 first), then fair share among tenants of equal priority (the tenant using the
// smallest share of its quota goes first, re-evaluated after every placement), then age.
// Placement: gangs are whole (all of a job's GPUs or none); a job that fits on one node goes to the
// node with the fewest free GPUs that still fits it (best fit keeps whole nodes free for large
// jobs); a larger job spreads over as few nodes as possible. Only healthy GPUs on available nodes
// are offered as free.
// Backfill (EASY, per capacity scope): a job's scope is the GPUs it could ever use: its GPU type,
// in its cluster when it is pinned to one. The first job of a scope that does not fit becomes that
// scope's head and gets a reservation at its earliest start, computed from the declared duration_s
// of running work in the scope (work without one counts as running until it ends). A later job may
// start now only if, for every reservation whose scope holds GPUs it would take, it ends before that
// head's start or leaves enough of those GPUs for the head; so backfill never delays a head, and
// work on GPUs no waiting head could use never waits behind one.
// A job whose scope has too few usable GPUs (healthy GPUs on available nodes, busy or not) for it
// to ever start, with every node that could host it in maintenance, quarantined, offline or
// draining, reserves nothing: it keeps its place and becomes a head again when capacity returns.

export interface FreeNode {
  nodeId: string;
  clusterId: string;
  gpuType: string;
  freeGpuIds: string[];
}

export interface QueuedJob {
  id: string;
  tenantId: string;
  gpuCount: number;
  gpuType: string;
  clusterId: string | null;
  priority: number;
  submittedAt: number;
  durationS: number | null;
  status: "queued" | "blocked";
}

export interface TenantUsage {
  quota: number;
  inUse: number;
}

export interface RunningWork {
  gpuType: string;
  clusterId: string;
  gpuCount: number;
  /** epoch ms when its declared duration ends; null when it declared none */
  endsAt: number | null;
}

/** Healthy GPUs of a type in a cluster on nodes that can take work now, free or busy. */
export interface Capacity {
  gpuType: string;
  clusterId: string;
  gpus: number;
}

export type Decision =
  | { jobId: string; outcome: "placed"; gpuIds: string[]; nodeIds: string[] }
  | { jobId: string; outcome: "blocked_quota"; reason: string }
  | { jobId: string; outcome: "pending"; reason: string };

interface Reservation {
  headId: string;
  headPriority: number;
  gpuType: string;
  clusterId: string | null;
  /** GPUs the head can count on at its start, minus what it needs (≥ 0 means the reservation holds) */
  spareAtStart: number;
  startsAt: number;
}

const short = (id: string) => id.slice(0, 8);

export function place(input: {
  now: number;
  nodes: FreeNode[];
  queue: QueuedJob[];
  tenants: Map<string, TenantUsage>;
  running: RunningWork[];
  capacity: Capacity[];
}): Decision[] {
  const free = input.nodes.map((n) => ({ ...n, freeGpuIds: [...n.freeGpuIds] }));
  const usage = new Map([...input.tenants].map(([id, u]) => [id, { ...u }]));
  const running = [...input.running];
  const capacity = new ScopeTotals(input.capacity);
  const reservations = new Map<string, Reservation>();
  const decisions: Decision[] = [];

  const pools = new FreePools(free);
  for (const job of fairOrder(input.queue, usage)) {
    const tenant = usage.get(job.tenantId) ?? { quota: 0, inUse: 0 };
    if (tenant.inUse + job.gpuCount > tenant.quota) {
      decisions.push({
        jobId: job.id,
        outcome: "blocked_quota",
        reason: `Quota: your organisation holds ${tenant.inUse} of its ${tenant.quota} GPUs; this job needs ${job.gpuCount}`,
      });
      continue;
    }
    const where = job.clusterId ? ` in cluster ${short(job.clusterId)}` : "";
    const scope = scopeKey(job.gpuType, job.clusterId);
    const usable = capacity.of(job.gpuType, job.clusterId);
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
      const available = pools.available(job.gpuType, job.clusterId);
      const head = reservations.get(scope);
      if (fit.blockedBy) {
        decisions.push({ jobId: job.id, outcome: "pending", reason: `Waiting behind job ${short(fit.blockedBy.headId)} (priority ${fit.blockedBy.headPriority}): starting now would delay it` });
      } else if (!head) {
        reservations.set(scope, reserve(job, available, running, input.now));
        decisions.push({ jobId: job.id, outcome: "pending", reason: `Needs ${job.gpuCount} free ${job.gpuType} GPUs${where}; ${available} free now. Capacity is reserved for it.` });
      } else {
        decisions.push({ jobId: job.id, outcome: "pending", reason: `Needs ${job.gpuCount} free ${job.gpuType} GPUs${where}; ${available} free, and waiting behind job ${short(head.headId)} (priority ${head.headPriority})` });
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
    // a gang without a cluster constraint may span clusters: each cluster gets its share back when it ends
    for (const [clusterId, gpuCount] of perCluster(fit.pick)) {
      running.push({ gpuType: job.gpuType, clusterId, gpuCount, endsAt: job.durationS === null ? null : input.now + job.durationS * 1000 });
    }
    decisions.push({ jobId: job.id, outcome: "placed", gpuIds, nodeIds });
  }
  return decisions;
}

const scopeKey = (gpuType: string, clusterId: string | null) => `${gpuType}\u0000${clusterId ?? "*"}`;

type Pick = Array<{ node: FreeNode; take: number }>;

function perCluster(pick: Pick): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of pick) out.set(p.node.clusterId, (out.get(p.node.clusterId) ?? 0) + p.take);
  return out;
}

/**
 * The job's best pick that delays no waiting head. A pick that would delay the head of a pinned
 * scope is tried again without that cluster (an unpinned job may well fit elsewhere); one that would
 * delay an unpinned head cannot avoid it by going elsewhere. Returns the reservations to charge, or
 * the head it must wait behind.
 */
function chooseAroundReservations(
  pools: FreePools,
  job: QueuedJob,
  reservations: Map<string, Reservation>,
  now: number,
): { pick: Pick | null; charges: Array<{ reservation: Reservation; impact: number }>; blockedBy?: Reservation } {
  const avoid = new Set<string>();
  let blockedBy: Reservation | undefined;
  for (;;) {
    const pick = pools.choose(job.gpuType, job.clusterId, job.gpuCount, avoid);
    if (!pick) return { pick: null, charges: [], blockedBy };
    const taken = perCluster(pick);
    const charges: Array<{ reservation: Reservation; impact: number }> = [];
    let delays: Reservation | undefined;
    for (const r of reservations.values()) {
      if (r.gpuType !== job.gpuType) continue;
      const impact = r.clusterId ? (taken.get(r.clusterId) ?? 0) : job.gpuCount;
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
    if (!delays.clusterId || job.clusterId) return { pick: null, charges: [], blockedBy };
    avoid.add(delays.clusterId);
  }
}

/** Usable GPUs per (type, cluster), summed per type for unpinned work. */
class ScopeTotals {
  private byScope = new Map<string, number>();

  constructor(rows: Capacity[]) {
    for (const r of rows) {
      for (const key of [scopeKey(r.gpuType, r.clusterId), scopeKey(r.gpuType, null)]) this.byScope.set(key, (this.byScope.get(key) ?? 0) + r.gpus);
    }
  }

  of(gpuType: string, clusterId: string | null): number {
    return this.byScope.get(scopeKey(gpuType, clusterId)) ?? 0;
  }
}

/**
 * Free GPUs per type, with nodes bucketed by how many GPUs they have free, so best fit is a few
 * bucket lookups rather than a scan of every node (10,000 jobs × 1,250 nodes otherwise).
 * Cluster-constrained jobs filter the type's nodes (the less common case).
 */
class FreePools {
  private byType = new Map<string, { buckets: Set<FreeNode>[]; nodes: FreeNode[] }>();

  constructor(nodes: FreeNode[]) {
    for (const n of nodes) {
      let pool = this.byType.get(n.gpuType);
      if (!pool) this.byType.set(n.gpuType, (pool = { buckets: [], nodes: [] }));
      pool.nodes.push(n);
      this.bucket(pool, n.freeGpuIds.length).add(n);
    }
  }

  private bucket(pool: { buckets: Set<FreeNode>[] }, k: number): Set<FreeNode> {
    return (pool.buckets[k] ??= new Set());
  }

  available(gpuType: string, clusterId: string | null): number {
    const pool = this.byType.get(gpuType);
    if (!pool) return 0;
    return pool.nodes.reduce((s, n) => s + (!clusterId || n.clusterId === clusterId ? n.freeGpuIds.length : 0), 0);
  }

  choose(gpuType: string, clusterId: string | null, need: number, avoidClusters: ReadonlySet<string> = new Set()): Pick | null {
    const pool = this.byType.get(gpuType);
    if (!pool) return null;
    if (clusterId) return choose(pool.nodes.filter((n) => n.clusterId === clusterId && n.freeGpuIds.length > 0), need);
    if (avoidClusters.size) return choose(pool.nodes.filter((n) => !avoidClusters.has(n.clusterId) && n.freeGpuIds.length > 0), need);
    for (let k = need; k < pool.buckets.length; k++) {
      const set = pool.buckets[k];
      if (!set || set.size === 0) continue;
      let best: FreeNode | undefined;
      for (const n of set) if (!best || n.nodeId < best.nodeId) best = n;
      return [{ node: best!, take: need }];
    }
    const out: Array<{ node: FreeNode; take: number }> = [];
    let left = need;
    for (let k = pool.buckets.length - 1; k >= 1 && left > 0; k--) {
      const set = pool.buckets[k];
      if (!set) continue;
      for (const n of [...set].sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1))) {
        if (left === 0) break;
        const take = Math.min(left, k);
        out.push({ node: n, take });
        left -= take;
      }
    }
    return left === 0 ? out : null;
  }

  take(node: FreeNode, count: number): string[] {
    const pool = this.byType.get(node.gpuType)!;
    this.bucket(pool, node.freeGpuIds.length).delete(node);
    const taken = node.freeGpuIds.splice(0, count);
    this.bucket(pool, node.freeGpuIds.length).add(node);
    return taken;
  }
}

/** Best fit on one node, or the fewest nodes (largest free first); null when the gang cannot be whole. */
export function choose(eligible: FreeNode[], need: number): Array<{ node: FreeNode; take: number }> | null {
  let best: FreeNode | undefined;
  for (const n of eligible) {
    if (n.freeGpuIds.length >= need && (!best || n.freeGpuIds.length < best.freeGpuIds.length || (n.freeGpuIds.length === best.freeGpuIds.length && n.nodeId < best.nodeId))) best = n;
  }
  if (best) return [{ node: best, take: need }];
  const total = eligible.reduce((s, n) => s + n.freeGpuIds.length, 0);
  if (total < need) return null;
  const sorted = [...eligible].sort((a, b) => b.freeGpuIds.length - a.freeGpuIds.length || (a.nodeId < b.nodeId ? -1 : 1));
  const out: Array<{ node: FreeNode; take: number }> = [];
  let left = need;
  for (const n of sorted) {
    if (left === 0) break;
    const take = Math.min(left, n.freeGpuIds.length);
    out.push({ node: n, take });
    left -= take;
  }
  return out;
}

/** When the head can start, from the declared ends of running work of its type, and what is spare then. */
function reserve(head: QueuedJob, freeNow: number, running: RunningWork[], now: number): Reservation {
  const relevant = running.filter((r) => r.gpuType === head.gpuType && (!head.clusterId || r.clusterId === head.clusterId));
  const ending = relevant.filter((r) => r.endsAt !== null).sort((a, b) => a.endsAt! - b.endsAt!);
  let available = freeNow;
  for (const r of ending) {
    available += r.gpuCount;
    if (available >= head.gpuCount) {
      return { headId: head.id, headPriority: head.priority, gpuType: head.gpuType, clusterId: head.clusterId, startsAt: Math.max(now, r.endsAt!), spareAtStart: available - head.gpuCount };
    }
  }
  // Not reachable from declared ends alone: it starts when work without a declared end finishes.
  const eventually = available + relevant.filter((r) => r.endsAt === null).reduce((s, r) => s + r.gpuCount, 0);
  return { headId: head.id, headPriority: head.priority, gpuType: head.gpuType, clusterId: head.clusterId, startsAt: Number.POSITIVE_INFINITY, spareAtStart: Math.max(-1, eventually - head.gpuCount) };
}

/** Priority groups in order; inside a group, repeatedly the job of the tenant with the smallest share of its quota. */
export function* fairOrder(queue: QueuedJob[], usage: Map<string, TenantUsage>): Generator<QueuedJob> {
  const byPriority = new Map<number, QueuedJob[]>();
  for (const j of queue) {
    const group = byPriority.get(j.priority);
    if (group) group.push(j);
    else byPriority.set(j.priority, [j]);
  }
  for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
    const perTenant = new Map<string, QueuedJob[]>();
    for (const j of byPriority.get(priority)!.sort((a, b) => a.submittedAt - b.submittedAt || (a.id < b.id ? -1 : 1))) {
      const list = perTenant.get(j.tenantId);
      if (list) list.push(j);
      else perTenant.set(j.tenantId, [j]);
    }
    const cursors = new Map<string, number>();
    while (perTenant.size) {
      let pickTenant: string | undefined;
      let pickShare = Infinity;
      let pickAge = Infinity;
      for (const [tenantId, jobs] of perTenant) {
        const u = usage.get(tenantId);
        const share = u && u.quota > 0 ? u.inUse / u.quota : Infinity;
        const age = jobs[cursors.get(tenantId) ?? 0]!.submittedAt;
        if (share < pickShare || (share === pickShare && age < pickAge) || pickTenant === undefined) {
          pickTenant = tenantId;
          pickShare = share;
          pickAge = age;
        }
      }
      const jobs = perTenant.get(pickTenant!)!;
      const cursor = (cursors.get(pickTenant!) ?? 0) + 1;
      cursors.set(pickTenant!, cursor);
      yield jobs[cursor - 1]!;
      if (cursor >= jobs.length) perTenant.delete(pickTenant!);
    }
  }
}
