/**
 * Where new replicas go (pure). Each replica needs `gpusPerReplica` GPUs on one node (a model's
 * tensor-parallel group does not span nodes). Nodes that hold no replica of this endpoint come
 * first, so one node failing takes down as few replicas as possible; among equals, the node with
 * the fewest free GPUs that still fit (best fit keeps whole nodes free for large jobs).
 */
export interface FreeNode {
  nodeId: string;
  freeGpuIds: string[];
}

export interface ReplicaPlacement {
  nodeId: string;
  gpuIds: string[];
}

export function placeReplicas(input: {
  need: number;
  gpusPerReplica: number;
  nodes: FreeNode[];
  occupiedNodeIds: Iterable<string>;
  quotaLeft: number;
}): ReplicaPlacement[] {
  const free = new Map(input.nodes.map((n) => [n.nodeId, [...n.freeGpuIds]]));
  const replicasOn = new Map<string, number>();
  for (const id of input.occupiedNodeIds) replicasOn.set(id, (replicasOn.get(id) ?? 0) + 1);
  const placements: ReplicaPlacement[] = [];
  let quotaLeft = input.quotaLeft;
  for (let i = 0; i < input.need && quotaLeft >= input.gpusPerReplica; i++) {
    let best: string | null = null;
    for (const [nodeId, gpus] of free) {
      if (gpus.length < input.gpusPerReplica) continue;
      if (best === null) {
        best = nodeId;
        continue;
      }
      const a = replicasOn.get(nodeId) ?? 0;
      const b = replicasOn.get(best) ?? 0;
      const bestFree = free.get(best)!.length;
      if (a < b || (a === b && (gpus.length < bestFree || (gpus.length === bestFree && nodeId < best)))) best = nodeId;
    }
    if (best === null) break;
    const gpus = free.get(best)!;
    placements.push({ nodeId: best, gpuIds: gpus.splice(0, input.gpusPerReplica) });
    replicasOn.set(best, (replicasOn.get(best) ?? 0) + 1);
    quotaLeft -= input.gpusPerReplica;
  }
  return placements;
}
