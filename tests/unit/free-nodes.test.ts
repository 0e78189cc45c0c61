import { describe, expect, it } from "vitest";
import { groupFreeNodes, type FreeGpu } from "@/lib/scheduler/free-nodes";

const gpu = (id: string, node: string, type = "H100"): FreeGpu => ({
  id,
  node_id: node,
  cluster_id: "c1",
  containers: true,
  gpu_type: type,
  pod: "p1",
  rack: "r1",
});

describe("free GPUs grouped by node", () => {
  it("keeps the order read, one node per node and GPU type, with that node's bookings and no others", () => {
    const nodes = groupFreeNodes(
      [gpu("g1", "n1"), gpu("g2", "n1"), gpu("g3", "n2"), gpu("g4", "n2", "A100")],
      new Map([["n2", { reservationId: "r9", bookedFrom: 1_000 }]]),
    );
    expect(nodes).toEqual([
      { nodeId: "n1", clusterId: "c1", gpuType: "H100", containers: true, freeGpuIds: ["g1", "g2"], pod: "p1", rack: "r1" },
      {
        nodeId: "n2",
        clusterId: "c1",
        gpuType: "H100",
        containers: true,
        freeGpuIds: ["g3"],
        pod: "p1",
        rack: "r1",
        reservationId: "r9",
        bookedFrom: 1_000,
      },
      {
        nodeId: "n2",
        clusterId: "c1",
        gpuType: "A100",
        containers: true,
        freeGpuIds: ["g4"],
        pod: "p1",
        rack: "r1",
        reservationId: "r9",
        bookedFrom: 1_000,
      },
    ]);
    // a node without bookings carries neither key (placement tells "no reservation" by absence)
    expect("reservationId" in nodes[0]!).toBe(false);
  });
});
