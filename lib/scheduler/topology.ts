// Topology-aware choice of nodes, pure (no I/O). Used for multi-node gangs (units are free GPUs)
// and for whole-node reservations (every eligible node is one unit).
//
// Multi-node training lives on the interconnect: nodes of one rack share a top-of-rack switch,
// racks of one pod share a spine, and clusters share nothing fast. So a request goes, in order of
// preference, to one pod; inside it to the fewest racks; and among equals to the best fit (the
// pod, rack and node with the fewest units that still hold what is needed), so whole racks and
// pods stay free for the next large request. Only when no pod can hold it does it span pods of one
// cluster (fewest pods, then fewest racks), and only when no cluster can, and the caller allows it,
// clusters. Nodes without a pod count as a pod of their own rack; nodes without a rack as a rack
// of their own node: unknown locality is never mistaken for closeness.
//
// Greedy is exact here: units are interchangeable within a group, so the fewest groups that cover
// a need are the largest ones, and taking the smallest group that covers the remainder last
// changes the count of none of them while leaving the larger groups whole.

export interface TopoNode {
  nodeId: string;
  clusterId: string;
  pod: string | null;
  rack: string | null;
  /** units on offer: free GPUs for a gang, 1 for a whole node */
  free: number;
}

export type TopoPick<N = TopoNode> = Array<{ node: N; take: number }>;

interface Group<N> {
  id: string;
  cap: number;
  children: Array<Group<N>>;
  nodes: N[];
}

/** Where a node is; a pod or rack left out is unknown, like null. */
export interface Located {
  nodeId: string;
  clusterId: string;
  pod?: string | null;
  rack?: string | null;
}

export const rackOf = (n: Located) => (n.rack != null ? `${n.clusterId}/${n.pod ?? ""}/${n.rack}` : `${n.clusterId}/node:${n.nodeId}`);
export const podOf = (n: Located) => (n.pod != null ? `${n.clusterId}/${n.pod}` : `${n.clusterId}/rack:${rackOf(n)}`);

/**
 * Chooses `need` units over the given nodes, or null when they do not hold that many (or, with
 * `oneCluster`, no single cluster does). Never takes more from a node than it offers, never a node
 * twice.
 */
export function pickTopology<N extends TopoNode>(nodes: readonly N[], need: number, opts: PickOptions = {}): TopoPick<N> | null {
  return new TopoTree(
    nodes.filter((n) => n.free > 0),
    (n) => n.free,
  ).pick(need, opts);
}

export interface PickOptions {
  oneCluster?: boolean;
  /** equally good choices go by id, or (with a salt) in an order of the caller's own */
  salt?: string;
}

/**
 * The fleet as the interconnect groups it (cluster → pod → rack → node), each group with the units
 * under it. Built once; a caller that hands units out (the scheduler, job after job) keeps the
 * counts current with `adjust`, so each pick costs a walk over pods and racks, not over every node.
 */
export class TopoTree<N extends Located> {
  private readonly clusters: Array<Group<N>>;
  private readonly path = new Map<N, Array<Group<N>>>();

  constructor(
    nodes: readonly N[],
    private readonly units: (n: N) => number,
  ) {
    const clusters = new Map<string, Group<N>>();
    const pods = new Map<string, Group<N>>();
    const racks = new Map<string, Group<N>>();
    for (const n of nodes) {
      let c = clusters.get(n.clusterId);
      if (!c) clusters.set(n.clusterId, (c = { id: n.clusterId, cap: 0, children: [], nodes: [] }));
      const podId = podOf(n);
      let p = pods.get(podId);
      if (!p) {
        pods.set(podId, (p = { id: podId, cap: 0, children: [], nodes: [] }));
        c.children.push(p);
      }
      const rackId = rackOf(n);
      let r = racks.get(rackId);
      if (!r) {
        racks.set(rackId, (r = { id: rackId, cap: 0, children: [], nodes: [] }));
        p.children.push(r);
      }
      r.nodes.push(n);
      const u = units(n);
      r.cap += u;
      p.cap += u;
      c.cap += u;
      this.path.set(n, [c, p, r]);
    }
    this.clusters = [...clusters.values()];
  }

  /** A node gave out (or got back) `delta` units. */
  adjust(n: N, delta: number): void {
    for (const g of this.path.get(n) ?? []) g.cap += delta;
  }

  pick(need: number, opts: PickOptions = {}): TopoPick<N> | null {
    if (need <= 0) return [];
    // concurrent bookings that would all pick the same best rack spread over the equally good ones
    const key: Key | undefined = opts.salt ? (id) => saltedKey(opts.salt!, id) : undefined;
    const tie = key ?? ((id: string) => id);
    const total = this.clusters.reduce((s, c) => s + c.cap, 0);
    if (total < need) return null;

    // 1. one pod: fewest racks; then the racks it touches hold the least (best fit: a rack it fills
    // exactly beats breaking a larger one), then the smallest pod, then a stable order
    let bestPod: { group: Group<N>; score: Score } | null = null;
    for (const c of this.clusters) {
      if (c.cap < need) continue;
      for (const pod of c.children) {
        if (pod.cap < need) continue;
        const racks = greedy(pod.children, need, key);
        const score: Score = [racks.length, racks.reduce((s, r) => s + r.group.cap, 0), pod.cap, tie(pod.id)];
        if (!bestPod || better(score, bestPod.score)) bestPod = { group: pod, score };
      }
    }
    if (bestPod) return this.take(bestPod.group, need, 1, key);

    // 2. one cluster: fewest pods, then fewest racks, then best fit, then the smallest cluster
    let bestCluster: { group: Group<N>; score: Score } | null = null;
    for (const c of this.clusters) {
      if (c.cap < need) continue;
      const plan = greedy(c.children, need, key);
      const racks = plan.flatMap((p) => greedy(p.group.children, p.take, key));
      const score: Score = [plan.length * 1_000_000 + racks.length, racks.reduce((s, r) => s + r.group.cap, 0), c.cap, tie(c.id)];
      if (!bestCluster || better(score, bestCluster.score)) bestCluster = { group: c, score };
    }
    if (bestCluster) return this.take(bestCluster.group, need, 2, key);
    if (opts.oneCluster) return null;

    // 3. across clusters, as few as possible
    return this.take({ id: "", cap: total, children: this.clusters, nodes: [] }, need, 3, key);
  }

  /** Takes `need` units from a group: the fewest children (largest first, the last one best fit), recursively down to nodes. */
  private take(group: Group<N>, need: number, depth: number, key: Key | undefined): TopoPick<N> {
    if (depth === 0) {
      const plan = greedy(
        group.nodes.map((n) => ({ id: n.nodeId, cap: this.units(n), children: [], nodes: [n] })),
        need,
        key,
      );
      return plan.map((p) => ({ node: p.group.nodes[0]!, take: p.take }));
    }
    return greedy(group.children, need, key).flatMap((p) => this.take(p.group, p.take, depth - 1, key));
  }
}

/** How good a plan is, smaller first: groups used, units in the groups it touches, size of the whole, tie key. */
type Score = [number, number, number, string];
const better = (a: Score, b: Score) => (a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || (a[3] < b[3] ? -1 : a[3] > b[3] ? 1 : 0)) < 0;

type Key = (id: string) => string;

/** FNV-1a of salt + id, as a sortable string. */
function saltedKey(salt: string, id: string): string {
  let h = 0x811c9dc5;
  for (const ch of salt + id) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0") + id;
}

/**
 * The fewest groups that cover `need`: while no single group covers what is left, the largest;
 * then the smallest group that covers the rest. Ties go to the smaller key, so picks are stable.
 */
export function greedy<G extends { id: string; cap: number }>(
  groups: readonly G[],
  need: number,
  key?: Key,
): Array<{ group: G; take: number }> {
  const keyed = key ? new Map(groups.map((g) => [g, key(g.id)])) : null;
  const k = (g: G) => (keyed ? keyed.get(g)! : g.id);
  const pool = groups.filter((g) => g.cap > 0).sort((a, b) => b.cap - a.cap || (k(a) < k(b) ? -1 : k(a) > k(b) ? 1 : 0));
  const out: Array<{ group: G; take: number }> = [];
  let left = need;
  while (left > 0 && pool.length) {
    let fit = -1;
    // pool is sorted by size, descending: the last one that covers `left` is the best fit
    for (let i = 0; i < pool.length && pool[i]!.cap >= left; i++) fit = i;
    if (fit >= 0) {
      // among equal best fits, the smallest key
      let i = fit;
      while (i > 0 && pool[i - 1]!.cap === pool[fit]!.cap) i--;
      out.push({ group: pool[i]!, take: left });
      return out;
    }
    const g = pool.shift()!;
    out.push({ group: g, take: g.cap });
    left -= g.cap;
  }
  return left > 0 ? [] : out;
}

/** How spread a set of nodes is: what the job and reservation pages show. */
export function topologySummary(nodes: readonly Located[]) {
  return {
    clusters: new Set(nodes.map((n) => n.clusterId)).size,
    pods: new Set(nodes.map(podOf)).size,
    racks: new Set(nodes.map(rackOf)).size,
    nodes: new Set(nodes.map((n) => n.nodeId)).size,
  };
}
