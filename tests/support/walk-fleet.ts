import { inject } from "vitest";
import { simClusters, startSimulator, type SimulatorOptions } from "@/agent/src/simulator";
import { db } from "@/lib/db/client";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { actorFor, makeCluster, makeKey } from "./fixtures";

// The simulated fleet of one browser walk: a cluster of its own whose nodes (one GPU type, which
// no other walk uses) speak only the HTTP API, like real agents. The walks share one app and one
// database and run one after another in an order vitest chooses, so a walk's nodes must not
// outlive it: a stopped simulator's nodes stay "available" until the offline sweep notices them
// (minutes), and the next walk's work would be placed on nodes that never start it. Stopping the
// fleet puts its nodes in service in maintenance first, as an operator retiring them would
// (quarantined or offline ones take no work already).

export interface WalkFleet {
  cluster: { id: string; name: string };
  sim: ReturnType<typeof startSimulator>;
  stop(): Promise<void>;
}

export async function startWalkFleet(opts: {
  gpuType: string;
  nodes: number;
  racks?: number;
  sim?: Pick<SimulatorOptions, "outputEveryS" | "modelLatencyMs" | "modelErrorRate" | "bmc" | "wipeS" | "tpm">;
}): Promise<WalkFleet> {
  const cluster = await makeCluster();
  const { key } = await makeKey({ scope: "agent", cluster_id: cluster.id });
  const racks = opts.racks ?? 1;
  const sim = startSimulator({
    baseUrl: inject("baseUrl"),
    clusters: simClusters({ [cluster.id]: key }, { pods: 1, racksPerPod: racks, nodesPerRack: Math.ceil(opts.nodes / racks) }, [
      opts.gpuType,
    ]),
    heartbeatS: 1,
    metricsS: 1,
    log: () => {},
    ...opts.sim,
  });
  await sim.ready;
  return {
    cluster,
    sim,
    async stop() {
      const nodes = await db().node.findMany({
        where: { clusterId: cluster.id, status: { in: ["available", "draining"] } },
        select: { id: true },
      });
      const operator = actorFor({ kind: "operator", label: "walk" });
      for (const n of nodes) await changeNodeStatus(operator, n.id, "maintenance", "the walk's simulated fleet stopped");
      sim.stop();
    },
  };
}
