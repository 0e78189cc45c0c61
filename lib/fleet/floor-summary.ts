// The fleet floor aggregated per rack, for the overview: counts an operator scans for, the nodes
// that need a look, the rack's drill-down address and its compact drawing. Pure (no I/O).
import { encodeRack } from "./floor-code";
import type { FloorRack } from "./queries";

export interface RackSummary {
  /** unique within its pod */
  rack: string;
  href: string;
  nodes: number;
  gpus: number;
  unhealthyGpus: number;
  /** GPUs at 50 % utilization or more in the last minutes */
  busyGpus: number;
  allocatedGpus: number;
  reservedNodes: number;
  /** nodes by status, available ones left out */
  outOfService: Record<string, number>;
  /** hostnames of the first nodes out of service or with an unhealthy GPU, most urgent first */
  attention: string[];
  attentionCount: number;
  code: string;
}

export interface PodSummary {
  key: string;
  title: string;
  racks: RackSummary[];
}

const ATTENTION_NAMED = 4;
const URGENCY = [
  "attestation_failed",
  "quarantined",
  "offline",
  "wiping",
  "inspecting",
  "releasing",
  "provisioning",
  "maintenance",
  "draining",
  "registered",
];

/** The drill-down address of one rack (pod and rack absent: the nodes registered without one). */
export function rackHref(r: Pick<FloorRack, "clusterId" | "podName" | "rackName">): string {
  const q = new URLSearchParams();
  if (r.podName !== null) q.set("pod", r.podName);
  if (r.rackName !== null) q.set("rack", r.rackName);
  const qs = q.toString();
  return `/admin/clusters/${r.clusterId}/rack${qs ? `?${qs}` : ""}`;
}

export function summarizeRack(r: FloorRack): RackSummary {
  const outOfService: Record<string, number> = {};
  const attention: Array<[number, string]> = [];
  let gpus = 0,
    unhealthyGpus = 0,
    busyGpus = 0,
    allocatedGpus = 0,
    reservedNodes = 0;
  for (const n of r.nodes) {
    const bad = n.gpus.filter((g) => g.status === "unhealthy").length;
    gpus += n.gpus.length;
    unhealthyGpus += bad;
    busyGpus += n.gpus.filter((g) => (g.util ?? 0) >= 50).length;
    allocatedGpus += n.gpus.filter((g) => g.allocated).length;
    if (n.reservedBy) reservedNodes++;
    if (n.status !== "available") outOfService[n.status] = (outOfService[n.status] ?? 0) + 1;
    const urgency = URGENCY.indexOf(n.status);
    if (urgency >= 0 || bad) attention.push([urgency >= 0 ? urgency : URGENCY.length, n.hostname]);
  }
  attention.sort((a, b) => a[0] - b[0]);
  return {
    rack: r.rack,
    href: rackHref(r),
    nodes: r.nodes.length,
    gpus,
    unhealthyGpus,
    busyGpus,
    allocatedGpus,
    reservedNodes,
    outOfService,
    attention: attention.slice(0, ATTENTION_NAMED).map(([, h]) => h),
    attentionCount: attention.length,
    code: encodeRack(r.nodes),
  };
}

/** Racks grouped by pod (and cluster, when there are several), in the query's order. */
export function summarizeFloor(racks: FloorRack[]): PodSummary[] {
  const manyClusters = new Set(racks.map((r) => r.clusterId)).size > 1;
  const pods = new Map<string, PodSummary>();
  for (const r of racks) {
    const key = `${r.clusterId}/${r.pod}`;
    const name = /^pod/i.test(r.pod) ? r.pod : `pod ${r.pod}`;
    const pod = pods.get(key) ?? { key, title: manyClusters ? `${r.cluster} · ${name}` : name, racks: [] };
    pod.racks.push(summarizeRack(r));
    pods.set(key, pod);
  }
  return [...pods.values()];
}

/** One sentence for a rack's tooltip and screen readers. */
export function describeRack(s: Omit<RackSummary, "code" | "href">, pod: string): string {
  const parts = [`Rack ${s.rack} in ${pod}: ${s.nodes} node${s.nodes === 1 ? "" : "s"}, ${s.gpus} GPUs`];
  parts.push(`${s.busyGpus} busy (≥ 50 %)`);
  if (s.allocatedGpus) parts.push(`${s.allocatedGpus} allocated`);
  if (s.unhealthyGpus) parts.push(`${s.unhealthyGpus} unhealthy`);
  const out = Object.entries(s.outOfService).map(([status, n]) => `${n} ${status}`);
  if (out.length) parts.push(`nodes ${out.join(", ")}`);
  if (s.reservedNodes) parts.push(`${s.reservedNodes} reserved`);
  const more = s.attentionCount - s.attention.length;
  if (s.attention.length) parts.push(`check ${s.attention.join(", ")}${more > 0 ? ` and ${more} more` : ""}`);
  return parts.join("; ");
}
