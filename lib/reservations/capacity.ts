// What is free in a window, pure (no I/O): the one answer the capacity API, the public listener,
// the booking code and its refusals share. A node is free as a whole for [from, to) when it is in
// service with every GPU healthy, no live reservation holds it at any moment of the window, and no
// work on it would still run at `from` (work that declared no duration runs until it ends, so it
// blocks every window). A GPU is free when its node is in service and unbooked for the window, it
// is healthy, and no such work holds it. Hardware out of service is not expected back: repairs take
// a human, so capacity never counts on them.
import { HANDOVER_STATUSES } from "@/lib/fleet/node-lifecycle";
import { pickTopology, type TopoNode } from "@/lib/scheduler/topology";

export interface InventoryNode {
  nodeId: string;
  clusterId: string;
  clusterName: string;
  region: string | null;
  pod: string | null;
  rack: string | null;
  status: string;
  gpuType: string;
  gpus: number;
  healthy: number;
}

/** A live reservation's hold on a node, as a bare window (no tenant). */
export interface Booking {
  nodeId: string;
  startsAt: number;
  endsAt: number;
}

/** GPUs work holds on a node now, until its declared end (null: it declared none). */
export interface Busy {
  nodeId: string;
  gpus: number;
  until: number | null;
}

export interface Window {
  from: number;
  to: number;
}

export interface CapacityFacts {
  nodes: InventoryNode[];
  bookings: Booking[];
  work: Busy[];
}

interface Figures {
  nodes: number;
  nodes_in_service: number;
  /** between tenants (released, wiped, inspected) or being provisioned: back in service once they pass */
  nodes_in_handover: number;
  free_nodes: number;
  gpus: number;
  free_gpus: number;
}
interface RackCapacity extends Figures {
  rack: string | null;
}
interface PodCapacity extends Figures {
  pod: string | null;
  racks: RackCapacity[];
}
interface ClusterCapacity extends Figures {
  cluster_id: string;
  cluster_name: string;
  region: string | null;
  pods: PodCapacity[];
}
export interface CapacityReport extends Figures {
  gpu_type: string | null;
  from: string;
  to: string;
  gpu_types: Array<{ gpu_type: string; free_nodes: number; free_gpus: number; gpus: number }>;
  clusters: ClusterCapacity[];
}

const HANDOVER = new Set<string>(HANDOVER_STATUSES);
const overlaps = (b: Booking, w: Window) => b.startsAt < w.to && b.endsAt > w.from;
const inService = (n: InventoryNode) => n.status === "available" && n.healthy === n.gpus;

/** Per node: free as a whole for the window, and its free GPUs. */
function nodeAvailability(facts: CapacityFacts, w: Window): Map<string, { whole: boolean; gpus: number }> {
  const booked = new Set(facts.bookings.filter((b) => overlaps(b, w)).map((b) => b.nodeId));
  const busy = new Map<string, number>();
  for (const x of facts.work) if (x.until === null || x.until > w.from) busy.set(x.nodeId, (busy.get(x.nodeId) ?? 0) + x.gpus);
  const out = new Map<string, { whole: boolean; gpus: number }>();
  for (const n of facts.nodes) {
    const held = busy.get(n.nodeId) ?? 0;
    const open = n.status === "available" && !booked.has(n.nodeId);
    out.set(n.nodeId, { whole: open && inService(n) && held === 0, gpus: open ? Math.max(0, n.healthy - held) : 0 });
  }
  return out;
}

/** Free whole nodes and GPUs per cluster, pod and rack for a window (of one GPU type, or all). */
export function capacityReport(facts: CapacityFacts, w: Window, filter: { gpuType?: string; clusterId?: string } = {}): CapacityReport {
  const nodes = facts.nodes.filter(
    (n) => (!filter.gpuType || n.gpuType === filter.gpuType) && (!filter.clusterId || n.clusterId === filter.clusterId),
  );
  const free = nodeAvailability({ ...facts, nodes }, w);
  const zero = (): Figures => ({ nodes: 0, nodes_in_service: 0, nodes_in_handover: 0, free_nodes: 0, gpus: 0, free_gpus: 0 });
  const add = (f: Figures, n: InventoryNode) => {
    const a = free.get(n.nodeId)!;
    f.nodes += 1;
    f.nodes_in_service += inService(n) ? 1 : 0;
    f.nodes_in_handover += HANDOVER.has(n.status) ? 1 : 0;
    f.free_nodes += a.whole ? 1 : 0;
    f.gpus += n.gpus;
    f.free_gpus += a.gpus;
  };
  const total = zero();
  const clusters = new Map<string, ClusterCapacity>();
  const types = new Map<string, { gpu_type: string; free_nodes: number; free_gpus: number; gpus: number }>();
  for (const n of [...nodes].sort(
    (a, b) =>
      a.clusterName.localeCompare(b.clusterName) || (a.pod ?? "").localeCompare(b.pod ?? "") || (a.rack ?? "").localeCompare(b.rack ?? ""),
  )) {
    add(total, n);
    let c = clusters.get(n.clusterId);
    if (!c)
      clusters.set(n.clusterId, (c = { cluster_id: n.clusterId, cluster_name: n.clusterName, region: n.region, ...zero(), pods: [] }));
    add(c, n);
    let p = c.pods.find((x) => x.pod === n.pod);
    if (!p) c.pods.push((p = { pod: n.pod, ...zero(), racks: [] }));
    add(p, n);
    let r = p.racks.find((x) => x.rack === n.rack);
    if (!r) p.racks.push((r = { rack: n.rack, ...zero() }));
    add(r, n);
    const t = types.get(n.gpuType) ?? { gpu_type: n.gpuType, free_nodes: 0, free_gpus: 0, gpus: 0 };
    const a = free.get(n.nodeId)!;
    t.free_nodes += a.whole ? 1 : 0;
    t.free_gpus += a.gpus;
    t.gpus += n.gpus;
    types.set(n.gpuType, t);
  }
  return {
    gpu_type: filter.gpuType ?? null,
    from: new Date(w.from).toISOString(),
    to: new Date(w.to).toISOString(),
    ...total,
    gpu_types: [...types.values()].sort((a, b) => a.gpu_type.localeCompare(b.gpu_type)),
    clusters: [...clusters.values()],
  };
}

export interface NodeRequest {
  gpuType: string;
  count: number;
  clusterId?: string | null;
}

/** Nodes of the type (and cluster) free as a whole for the window, as topology units. */
export function wholeFreeNodes(facts: CapacityFacts, w: Window, req: Omit<NodeRequest, "count">): Array<TopoNode & { gpus: number }> {
  const nodes = facts.nodes.filter((n) => n.gpuType === req.gpuType && (!req.clusterId || n.clusterId === req.clusterId));
  const free = nodeAvailability({ ...facts, nodes }, w);
  return nodes
    .filter((n) => free.get(n.nodeId)!.whole)
    .map((n) => ({ nodeId: n.nodeId, clusterId: n.clusterId, pod: n.pod, rack: n.rack, free: 1, gpus: n.gpus }));
}

/**
 * The nodes a reservation gets: one cluster, one pod when possible, the fewest racks, best fit
 * (lib/scheduler/topology). `salt` orders equally good choices per booking, so bookings racing
 * for the same window spread over equal racks instead of all losing the same one but one.
 */
export function chooseReservationNodes(facts: CapacityFacts, w: Window, req: NodeRequest, salt?: string) {
  const pick = pickTopology(wholeFreeNodes(facts, w, req), req.count, { oneCluster: true, salt });
  return pick && pick.map((p) => p.node);
}

/**
 * The earliest window of the same length, starting at or after `w.from`, in which the request
 * fits: candidate starts are the window's own and every moment a booking or declared work ends
 * (only then can more become free). Null when nothing fits before `horizon`.
 */
export function earliestFit(facts: CapacityFacts, w: Window, req: NodeRequest, horizon: number): Window | null {
  const length = w.to - w.from;
  const ends = [...facts.bookings.map((b) => b.endsAt), ...facts.work.flatMap((x) => (x.until === null ? [] : [x.until]))];
  const starts = [...new Set([w.from, ...ends.filter((t) => t > w.from && t <= horizon)])].sort((a, b) => a - b);
  for (const from of starts) {
    const candidate = { from, to: from + length };
    if (chooseReservationNodes(facts, candidate, req)) return candidate;
  }
  return null;
}
