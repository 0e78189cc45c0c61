import { describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { fleetFloor } from "@/lib/fleet/queries";
import { summarizeFloor } from "@/lib/fleet/floor-summary";
import { registerNode } from "@/lib/fleet/register-node";
import { createPod } from "@/lib/pods/create-pod";
import { createPodBody } from "@/lib/pods/schemas";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import {
  actorFor,
  agentPrincipal,
  availableFleet,
  inventory,
  makeCluster,
  makeTenant,
  tenantAdminPrincipal,
  unique,
} from "../support/fixtures";

// The floor's one query against a real database: racks of a cluster, one rack on its own (nodes
// without a pod or rack included), the tenant whose reservation holds a node, unhealthy GPUs.

describe("fleet floor query", () => {
  it("groups a cluster's nodes by pod and rack, with reservations and GPU health, and narrows to one rack", async () => {
    const cluster = await makeCluster();
    const agent = actorFor(agentPrincipal(cluster.id));
    const a = await registerNode(agent, { hostname: unique("a"), pod: "p1", rack: "r1", gpus: inventory(8) });
    const b = await registerNode(agent, { hostname: unique("b"), pod: "p1", rack: "r1", gpus: inventory(8) });
    const c = await registerNode(agent, { hostname: unique("c"), pod: "p1", rack: "r2", gpus: inventory(4) });
    const loose = await registerNode(agent, { hostname: unique("loose"), gpus: inventory(2) });
    await db().$executeRaw`UPDATE nodes SET status = 'available' WHERE cluster_id = ${cluster.id}::uuid`;
    const tenant = await makeTenant(64);
    const [res] = await db().$queryRaw<Array<{ id: string }>>`
      INSERT INTO reservations (tenant_id, gpu_type, node_count, cluster_id, starts_at, ends_at, status, created_by)
      VALUES (${tenant.id}::uuid, 'H100', 1, ${cluster.id}::uuid, now() - interval '1 minute', now() + interval '1 hour', 'active', 'test') RETURNING id`;
    await db().$executeRaw`INSERT INTO reservation_nodes (reservation_id, tenant_id, node_id, gpu_count, starts_at, ends_at)
      VALUES (${res!.id}::uuid, ${tenant.id}::uuid, ${a.node.id}::uuid, 8, now() - interval '1 minute', now() + interval '1 hour')`;
    await db()
      .$executeRaw`UPDATE gpus SET status = 'unhealthy', unhealthy_reason = 'XID 79' WHERE node_id = ${b.node.id}::uuid AND index = 3`;

    const racks = await fleetFloor(cluster.id);
    expect(racks.map((r) => [r.podName, r.rackName, r.nodes.length])).toEqual([
      ["p1", "r1", 2],
      ["p1", "r2", 1],
      [null, null, 1],
    ]);
    const nodeA = racks[0]!.nodes.find((n) => n.id === a.node.id)!;
    expect(nodeA.reservedBy).toBe(tenant.name);
    expect(nodeA.gpus.every((g) => g.allocated === false && g.util === null)).toBe(true);
    const pods = summarizeFloor(racks);
    const r1 = pods[0]!.racks[0]!;
    expect(r1).toMatchObject({
      nodes: 2,
      gpus: 16,
      unhealthyGpus: 1,
      reservedNodes: 1,
      href: `/admin/clusters/${cluster.id}/rack?pod=p1&rack=r1`,
    });
    expect(r1.code.split(" ").sort()).toEqual(["---x----", "--------"].map((g, i) => (i === 0 ? "a" : "A") + g).sort());

    const one = await fleetFloor(cluster.id, { pod: "p1", rack: "r2" });
    expect(one.map((r) => r.nodes.map((n) => n.id))).toEqual([[c.node.id]]);
    const unassigned = await fleetFloor(cluster.id, { pod: null, rack: null });
    expect(unassigned.map((r) => r.nodes.map((n) => n.id))).toEqual([[loose.node.id]]);
  });

  it("shows GPUs a pod holds as allocated, like those of jobs and replicas", async () => {
    const { cluster, gpuType, nodes } = await availableFleet(1, 8, "FP");
    const tenant = await makeTenant(8);
    const pod = await createPod(
      actorFor(tenantAdminPrincipal(tenant.id)),
      createPodBody.parse({ name: unique("pod"), gpu_type: gpuType, gpu_count: 2, image: "runpod/pytorch:2.4.0" }),
    );
    await runSchedulerCycle("test: a pod on the floor");
    const held = await db().gpu.count({ where: { allocatedPodId: pod.id } });
    expect(held).toBe(2);
    const racks = await fleetFloor(cluster.id);
    const node = racks.flatMap((r) => r.nodes).find((n) => n.id === nodes[0]!.node.id)!;
    expect(node.gpus.filter((g) => g.allocated)).toHaveLength(2);
  });
});
