import type { FreeNode } from "./placement";

// The shape the placers see free capacity in (pure); lib/scheduler/capacity-queries.ts reads it.

/** A GPU that can take work now: healthy, held by nothing, on an available node. */
export interface FreeGpu {
  id: string;
  node_id: string;
  cluster_id: string;
  containers: boolean;
  /** a Slurm cluster's node: batch jobs only (lib/scheduler/placement.ts) */
  batch_only?: boolean;
  gpu_type: string;
  pod: string | null;
  rack: string | null;
  /** a provider instance's node: the job it was rented for ('' while idle); null for every other node */
  dedicated_to?: string | null;
}

/** A node's whole-node reservations now: the one holding it, and when its next booking starts. */
export interface NodeBooking {
  /** the reservation in force that holds the node: only its tenant's work goes there */
  reservationId?: string;
  /** epoch ms when the node's next reservation starts: work placed now must end before it */
  bookedFrom?: number;
}

/** Free GPUs grouped by node (and GPU type), in the order read, with each node's bookings (pure). */
export function groupFreeNodes(gpus: readonly FreeGpu[], bookings: ReadonlyMap<string, NodeBooking>): FreeNode[] {
  const nodes = new Map<string, FreeNode>();
  for (const g of gpus) {
    const key = `${g.node_id}/${g.gpu_type}`;
    let node = nodes.get(key);
    if (!node) {
      node = {
        nodeId: g.node_id,
        clusterId: g.cluster_id,
        gpuType: g.gpu_type,
        containers: g.containers,
        ...(g.batch_only ? { batchOnly: true } : {}),
        freeGpuIds: [],
        pod: g.pod,
        rack: g.rack,
        ...(g.dedicated_to != null ? { dedicatedTo: g.dedicated_to } : {}),
        ...bookings.get(g.node_id),
      };
      nodes.set(key, node);
    }
    node.freeGpuIds.push(g.id);
  }
  return [...nodes.values()];
}
