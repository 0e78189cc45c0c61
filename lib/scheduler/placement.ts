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
// Backfill (EASY): the first job of a GPU type that does not fit becomes that type's head and gets
// a reservation at its earliest start, computed from the declared duration_s of running work (work
// without one counts as running until it ends). A later job may start now only if it ends before
// that time or leaves enough GPUs for the head; so backfill never delays the head.

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

export type Decision =
  | { jobId: string; outcome: "placed"; gpuIds: string[]; nodeIds: string[] }
  | { jobId: string; outcome: "blocked_quota"; reason: string }
  | { jobId: string; outcome: "pending"; reason: string };

interface Reservation {
  headId: string;
  headPriority: number;
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
}): Decision[] {
  const free = input.nodes.map((n) => ({ ...n, freeGpuIds: [...n.freeGpuIds] }));
  const usage = new Map([...input.tenants].map(([id, u]) => [id, { ...u }]));
  const running = [...input.running];
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
    const pick = pools.choose(job.gpuType, job.clusterId, job.gpuCount);
    const where = job.clusterId ? ` in cluster ${short(job.clusterId)}` : "";
    if (!pick) {
      const available = pools.available(job.gpuType, job.clusterId);
      if (!reservations.has(job.gpuType)) {
        reservations.set(job.gpuType, reserve(job, available, running, input.now));
        decisions.push({ jobId: job.id, outcome: "pending", reason: `Needs ${job.gpuCount} free ${job.gpuType} GPUs${where}; ${available} free now. Capacity is reserved for it.` });
      } else {
        const r = reservations.get(job.gpuType)!;
        decisions.push({ jobId: job.id, outcome: "pending", reason: `Needs ${job.gpuCount} free ${job.gpuType} GPUs${where}; ${available} free, and waiting behind job ${short(r.headId)} (priority ${r.headPriority})` });
      }
      continue;
    }
    const r = reservations.get(job.gpuType);
    if (r) {
      const endsBeforeHead = job.durationS !== null && input.now + job.durationS * 1000 <= r.startsAt;
      const impact = r.clusterId ? pick.filter((p) => p.node.clusterId === r.clusterId).reduce((s, p) => s + p.take, 0) : job.gpuCount;
      if (!endsBeforeHead && impact > r.spareAtStart) {
        decisions.push({ jobId: job.id, outcome: "pending", reason: `Waiting behind job ${short(r.headId)} (priority ${r.headPriority}): starting now would delay it` });
        continue;
      }
      if (!endsBeforeHead) r.spareAtStart -= impact;
    }
    const gpuIds: string[] = [];
    const nodeIds: string[] = [];
    for (const p of pick) {
      gpuIds.push(...pools.take(p.node, p.take));
      nodeIds.push(p.node.nodeId);
    }
    tenant.inUse += job.gpuCount;
    usage.set(job.tenantId, tenant);
    // a gang without a cluster constraint may span clusters: each cluster gets its share back when it ends
    const perCluster = new Map<string, number>();
    for (const p of pick) perCluster.set(p.node.clusterId, (perCluster.get(p.node.clusterId) ?? 0) + p.take);
    for (const [clusterId, gpuCount] of perCluster) {
      running.push({ gpuType: job.gpuType, clusterId, gpuCount, endsAt: job.durationS === null ? null : input.now + job.durationS * 1000 });
    }
    decisions.push({ jobId: job.id, outcome: "placed", gpuIds, nodeIds });
  }
  return decisions;
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

  choose(gpuType: string, clusterId: string | null, need: number): Array<{ node: FreeNode; take: number }> | null {
    const pool = this.byType.get(gpuType);
    if (!pool) return null;
    if (clusterId) return choose(pool.nodes.filter((n) => n.clusterId === clusterId && n.freeGpuIds.length > 0), need);
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
      return { headId: head.id, headPriority: head.priority, clusterId: head.clusterId, startsAt: Math.max(now, r.endsAt!), spareAtStart: available - head.gpuCount };
    }
  }
  // Not reachable from declared ends alone: it starts when work without a declared end finishes.
  const eventually = available + relevant.filter((r) => r.endsAt === null).reduce((s, r) => s + r.gpuCount, 0);
  return { headId: head.id, headPriority: head.priority, clusterId: head.clusterId, startsAt: Number.POSITIVE_INFINITY, spareAtStart: Math.max(-1, eventually - head.gpuCount) };
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
