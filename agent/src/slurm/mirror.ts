// How Slurm's nodes appear to GPUForge: what the bridge registers for each (its GPUs from the node's
// GPU GRES, one per device index), what each heartbeat says of it (state, reason, load), and which
// of its GPUs jobs outside GPUForge hold. Pure (no I/O).
import { gpuCount, type GpuGres } from "../../../lib/slurm/gres";
import { jobPhase } from "../../../lib/slurm/job-state";
import type { SlurmPartition } from "../../../lib/slurm/schemas";
import type { QueueJob, SlurmNode, SlurmPartitionInfo } from "./parse";

/** GPU memory (MiB) of common GPU types, for GRES that say nothing of memory; SLURM_GPU_MEMORY_MB overrides. */
const KNOWN_MEMORY_MB: Record<string, number> = {
  H100: 81_559,
  H200: 143_771,
  B200: 183_359,
  GB200: 189_471,
  A100: 81_920,
  "A100-80G": 81_920,
  "A100-40G": 40_960,
  L40S: 46_068,
  L40: 46_068,
  L4: 23_034,
  A40: 46_068,
  A10: 23_028,
  A30: 24_576,
  V100: 32_768,
  T4: 15_360,
  MI300X: 196_608,
  MI250X: 131_072,
};

export interface GpuNaming {
  /** GRES type (lower case as Slurm has it) → GPUForge GPU type; "" for an untyped `gpu:N` */
  types: Map<string, string>;
  memoryMb: Map<string, number>;
}

/** SLURM_GPU_TYPES="h100=H100,a100_80g=A100-80G" and SLURM_GPU_MEMORY_MB="A100-80G=81920". */
export function parseGpuNaming(types: string | undefined, memory: string | undefined): GpuNaming {
  const pairs = (s: string | undefined) =>
    (s ?? "")
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p) => p.split("=").map((x) => x.trim()) as [string, string]);
  return {
    types: new Map(pairs(types).map(([k, v]) => [k.toLowerCase(), v])),
    memoryMb: new Map(pairs(memory).map(([k, v]) => [k, Number(v)])),
  };
}

/** GPUForge's GPU type for a GRES type: the configured one, else the GRES type in upper case. */
function gpuTypeOf(gresType: string | null, naming: GpuNaming): string {
  const configured = naming.types.get((gresType ?? "").toLowerCase());
  if (configured) return configured;
  return (gresType ?? "gpu")
    .toUpperCase()
    .replace(/[^A-Z0-9._-]/g, "-")
    .slice(0, 32);
}

export interface NodeGpu {
  index: number;
  gresType: string | null;
  gpuType: string;
}

/** A node's GPUs, one per device index, in the order Slurm numbers them (its GRES entries in turn). */
export function gpusOf(node: SlurmNode, naming: GpuNaming): NodeGpu[] {
  const out: NodeGpu[] = [];
  for (const g of node.gres)
    for (let i = 0; i < g.count; i++) out.push({ index: out.length, gresType: g.type, gpuType: gpuTypeOf(g.type, naming) });
  return out.slice(0, 64);
}

/** The partition a node is shown in on the fleet floor (its pod): the default partition if it is in it, else its first. */
function primaryPartition(node: SlurmNode, partitions: readonly SlurmPartitionInfo[]): string | null {
  const def = partitions.find((p) => p.isDefault && node.partitions.includes(p.name));
  return def?.name ?? node.partitions[0] ?? null;
}

export function registration(
  node: SlurmNode,
  o: {
    clusterName: string;
    naming: GpuNaming;
    partitions: readonly SlurmPartitionInfo[];
    containers: { on: boolean; runtime: string };
    version: string;
  },
) {
  const gpus = gpusOf(node, o.naming);
  return {
    hostname: node.name,
    pod: primaryPartition(node, o.partitions),
    cpu_cores: node.cpus && node.cpus > 0 ? node.cpus : null,
    memory_gb: node.memoryMb && node.memoryMb >= 1024 ? Math.round(node.memoryMb / 1024) : null,
    agent_version: `slurm-bridge ${o.version}`,
    capabilities: o.containers.on ? { containers: true, runtime: o.containers.runtime } : { containers: false },
    system: { ...(node.os ? { os: node.os } : {}) },
    gpus: gpus.map((g) => ({
      uuid: `SLURM-${o.clusterName}-${node.name}-${g.index}`.slice(0, 128),
      index: g.index,
      gpu_type: g.gpuType,
      model: `Slurm GRES gpu${g.gresType ? `:${g.gresType}` : ""}`,
      memory_total_mb: o.naming.memoryMb.get(g.gpuType) ?? KNOWN_MEMORY_MB[g.gpuType] ?? 1,
    })),
    slurm: slurmSection(node),
  };
}

export function slurmSection(node: SlurmNode) {
  return {
    state: node.state,
    reason: node.reason?.slice(0, 500) ?? null,
    reason_by: node.reasonBy?.slice(0, 64) ?? null,
    reason_at: node.reasonAt?.toISOString() ?? null,
    partitions: node.partitions.slice(0, 64),
    cpus: node.cpus,
    cpus_alloc: node.cpusAlloc,
    memory_mb: node.memoryMb,
    memory_alloc_mb: node.memoryAllocMb,
    gres: node.gresText?.slice(0, 500) ?? null,
  };
}

/** What about a registration means registering again (its state and reason are heartbeats' business). */
export function registrationSignature(r: ReturnType<typeof registration>): string {
  const { slurm, ...rest } = r;
  return JSON.stringify({ ...rest, partitions: slurm.partitions, gres: slurm.gres, cpus: slurm.cpus, memory_mb: slurm.memory_mb });
}

export interface ForeignJob {
  slurm_job_id?: string;
  user?: string | null;
  partition?: string | null;
  gpus: number;
  started_at?: string | null;
}

/** Whether a job holds its allocation (its GPUs) now. */
const holds = (j: QueueJob) => jobPhase(j.state) === "running";

/**
 * The GPUs jobs outside GPUForge hold on a node: what Slurm says is in use there (GresUsed) less what
 * GPUForge's own Slurm jobs hold, attributed to the foreign jobs running there (by their per-node
 * request where it says, the rest shared among them, or to "jobs outside GPUForge" when none is
 * visible to the bridge).
 */
export function foreignLoad(
  node: string,
  used: readonly GpuGres[] | undefined,
  ownGpus: number,
  jobs: readonly QueueJob[],
  isOurs: (j: QueueJob) => boolean,
): ForeignJob[] {
  const inUse = gpuCount(used ? used.map((g) => `gpu:${g.count}`).join(",") : "");
  let left = Math.max(0, inUse - ownGpus);
  const foreign = jobs.filter((j) => !isOurs(j) && holds(j) && j.nodes.includes(node));
  const out: ForeignJob[] = [];
  const unknown: QueueJob[] = [];
  for (const j of foreign) {
    const asked = j.tresPerNode.reduce((n, g) => n + g.count, 0);
    if (asked <= 0) {
      unknown.push(j);
      continue;
    }
    const take = Math.min(asked, left);
    left -= take;
    if (take > 0) out.push(entry(j, take));
  }
  for (const [i, j] of unknown.entries()) {
    const take = Math.ceil(left / (unknown.length - i));
    left -= take;
    if (take > 0) out.push(entry(j, take));
  }
  if (left > 0) out.push({ gpus: left });
  return out;
}

const entry = (j: QueueJob, gpus: number): ForeignJob => ({
  slurm_job_id: j.leader,
  user: j.user?.slice(0, 64) ?? null,
  partition: j.partition && /^[A-Za-z0-9._-]{1,64}$/.test(j.partition) ? j.partition : null,
  gpus: Math.min(64, gpus),
  started_at: j.startedAt?.toISOString() ?? null,
});

/** The cluster's partitions as the control plane records them (GPUs counted over the nodes the bridge mirrors). */
export function partitionPicture(partitions: readonly SlurmPartitionInfo[], gpusByNode: ReadonlyMap<string, number>): SlurmPartition[] {
  return partitions.slice(0, 512).map((p) => ({
    name: p.name,
    state: /^[A-Za-z_]{1,32}$/.test(p.state) ? p.state : "UNKNOWN",
    default: p.isDefault,
    nodes: p.nodesText.slice(0, 20_000),
    node_count: p.nodes.length,
    max_time_s: p.maxTimeS === null ? null : Math.min(p.maxTimeS, 10 * 365 * 86_400),
    gpus: p.nodes.reduce((n, name) => n + (gpusByNode.get(name) ?? 0), 0),
    cpus: p.cpus ?? 0,
  }));
}
