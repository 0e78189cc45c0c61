// How one GPUForge placement becomes one sbatch submission: GPUForge chose the nodes and how many
// GPUs on each; Slurm runs exactly that. Pure (no I/O); the bridge runs what it answers.
//
// A job asks Slurm for the same GPUs on every node (--gres=gpu:N per node), so a placement with an
// even split is one job over its nodes (--nodelist, --nodes, --gres); an uneven one (8 + 2) is a
// heterogeneous job, one component per group of nodes with the same count, each with its own
// --nodelist and --gres. Every component runs in a partition that holds all of its nodes, is up,
// and allows the job's time limit.

import { compressHostlist } from "./hostlist";

export interface PartitionFacts {
  name: string;
  /** UP, DOWN, DRAIN, INACTIVE */
  state: string;
  isDefault: boolean;
  nodes: readonly string[];
  /** null: unlimited */
  maxTimeS: number | null;
}

export interface ChosenNode {
  /** the Slurm node name (the GPUForge node's hostname) */
  name: string;
  gpus: number;
  /** the GRES type GPUForge's GPU type maps to on this node (null: an untyped gpu GRES) */
  gresType: string | null;
  cpus: number | null;
  memoryMb: number | null;
  /** how many GPUs the node has in all (its per-GPU share of CPUs and memory) */
  gpusTotal: number;
}

export interface Component {
  partition: string;
  nodes: string[];
  gpusPerNode: number;
  gresType: string | null;
  cpusPerGpu: number | null;
  memPerGpuMb: number | null;
}

export type SubmissionPlan = { ok: true; components: Component[] } | { ok: false; reason: string };

/** The minutes Slurm gets for --time: Slurm counts time limits in whole minutes, rounded up. */
export function timeLimitMinutes(durationS: number): number {
  return Math.max(1, Math.ceil(durationS / 60));
}

/** A partition for these nodes: up, holding them all, allowing the time limit; the default first. */
export function choosePartition(
  partitions: readonly PartitionFacts[],
  nodes: readonly string[],
  durationS: number | null,
  allowed?: readonly string[],
): PartitionFacts | null {
  const limitS = durationS === null ? null : timeLimitMinutes(durationS) * 60;
  const fits = partitions.filter(
    (p) =>
      p.state.toUpperCase() === "UP" &&
      (!allowed?.length || allowed.includes(p.name)) &&
      nodes.every((n) => p.nodes.includes(n)) &&
      (p.maxTimeS === null || (limitS !== null && limitS <= p.maxTimeS)),
  );
  fits.sort((a, b) => Number(b.isDefault) - Number(a.isDefault) || a.nodes.length - b.nodes.length || a.name.localeCompare(b.name));
  return fits[0] ?? null;
}

/** Each node's share of its CPUs and memory per GPU (the node agent's proportional limits). */
function shareOf(nodes: readonly ChosenNode[]) {
  const per = (v: (n: ChosenNode) => number | null) => {
    const values = nodes.map((n) => {
      const x = v(n);
      return x === null || n.gpusTotal <= 0 ? null : Math.floor(x / n.gpusTotal);
    });
    return values.some((x) => x === null || x < 1) ? null : Math.min(...(values as number[]));
  };
  return {
    cpusPerGpu: per((n) => n.cpus),
    // a node whose memory Slurm does not know (RealMemory=1) gets no memory request
    memPerGpuMb: per((n) => (n.memoryMb !== null && n.memoryMb > 1 ? n.memoryMb : null)),
  };
}

export function planSubmission(
  chosen: readonly ChosenNode[],
  partitions: readonly PartitionFacts[],
  durationS: number | null,
  allowed?: readonly string[],
): SubmissionPlan {
  if (chosen.length === 0) return { ok: false, reason: "the placement names no nodes" };
  // one component per (GPU count, GRES type): --gres is per node within a component
  const groups = new Map<string, ChosenNode[]>();
  for (const n of chosen) {
    const key = `${n.gpus}/${n.gresType ?? ""}`;
    groups.set(key, [...(groups.get(key) ?? []), n]);
  }
  const components: Component[] = [];
  for (const nodes of groups.values()) {
    const names = nodes.map((n) => n.name);
    let split: ChosenNode[][] = [nodes];
    if (!choosePartition(partitions, names, durationS, allowed)) {
      // no partition holds them all: one component per partition that holds some of them
      split = [];
      const left = [...nodes];
      while (left.length) {
        const p = choosePartition(partitions, [left[0]!.name], durationS, allowed);
        if (!p) {
          return {
            ok: false,
            reason: `no partition that is up${allowed?.length ? ` and allowed (${allowed.join(", ")})` : ""} holds node ${left[0]!.name}${durationS === null ? " with an unlimited time limit" : ` and allows ${timeLimitMinutes(durationS)} min`}`,
          };
        }
        const here = left.filter((n) => p.nodes.includes(n.name));
        split.push(here);
        for (const n of here) left.splice(left.indexOf(n), 1);
      }
    }
    for (const part of split) {
      const p = choosePartition(
        partitions,
        part.map((n) => n.name),
        durationS,
        allowed,
      )!;
      components.push({
        partition: p.name,
        nodes: part.map((n) => n.name),
        gpusPerNode: part[0]!.gpus,
        gresType: part[0]!.gresType,
        ...shareOf(part),
      });
    }
  }
  components.sort((a, b) => b.gpusPerNode - a.gpusPerNode || a.nodes[0]!.localeCompare(b.nodes[0]!));
  return { ok: true, components };
}

/** sbatch's options for one component (the resources; what the job runs is in its script). */
export function componentArgs(c: Component, durationS: number | null): string[] {
  const gres = c.gpusPerNode > 0 ? [`--gres=gpu:${c.gresType ? `${c.gresType}:` : ""}${c.gpusPerNode}`] : [];
  return [
    `--partition=${c.partition}`,
    `--nodelist=${compressHostlist(c.nodes)}`,
    `--nodes=${c.nodes.length}`,
    "--ntasks-per-node=1",
    ...gres,
    ...(c.gpusPerNode > 0 && c.cpusPerGpu ? [`--cpus-per-gpu=${c.cpusPerGpu}`] : []),
    ...(c.gpusPerNode > 0 && c.memPerGpuMb ? [`--mem-per-gpu=${c.memPerGpuMb}M`] : []),
    ...(durationS !== null ? [`--time=${timeLimitMinutes(durationS)}`] : []),
  ];
}
