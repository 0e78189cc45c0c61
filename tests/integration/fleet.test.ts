import { describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { markOfflineNodes } from "@/lib/fleet/mark-offline-nodes";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { actorFor, agentPrincipal, inventory, makeCluster, operatorPrincipal, sweepUntilOffline, unique } from "../support/fixtures";
import { codeOf } from "../support/outcomes";

const agent = (clusterId: string) => actorFor(agentPrincipal(clusterId));
const operator = actorFor(operatorPrincipal);

async function freshNode(gpus = 8) {
  const cluster = await makeCluster();
  const inv = inventory(gpus);
  const r = await registerNode(agent(cluster.id), { hostname: unique("node"), pod: "p1", rack: "r1", gpus: inv });
  return { cluster, inv, ...r };
}

async function backdateHeartbeat(nodeId: string, seconds: number) {
  await db()
    .$executeRaw`UPDATE nodes SET last_heartbeat_at = now() - make_interval(secs => ${seconds}::int), created_at = now() - make_interval(secs => ${seconds}::int) WHERE id = ${nodeId}::uuid`;
}

describe("node registration", () => {
  it("is idempotent by cluster + hostname; GPUs match by uuid", async () => {
    const cluster = await makeCluster();
    const inv = inventory(8);
    const hostname = unique("node");
    const first = await registerNode(agent(cluster.id), { hostname, gpus: inv });
    expect(first.created).toBe(true);
    expect(first.node.status).toBe("registered");
    const again = await registerNode(agent(cluster.id), { hostname, rack: "r9", agent_version: "0.2.0", gpus: [...inv].reverse() });
    expect(again.created).toBe(false);
    expect(again.node.id).toBe(first.node.id);
    expect(again.node.rack).toBe("r9");
    expect(again.gpus.map((g) => g.id).sort()).toEqual(first.gpus.map((g) => g.id).sort());
    expect(await db().node.count({ where: { clusterId: cluster.id } })).toBe(1);
    expect(await db().gpu.count({ where: { nodeId: first.node.id } })).toBe(8);
  });

  it("marks a GPU that left the inventory missing (not deleted) and brings it back when it returns", async () => {
    const { cluster, inv, node } = await freshNode(4);
    const replacement = { ...inv[3]!, uuid: unique("GPU-new") };
    const r = await registerNode(agent(cluster.id), { hostname: node.hostname, gpus: [...inv.slice(0, 3), replacement] });
    const old = r.gpus.find((g) => g.uuid === inv[3]!.uuid)!;
    expect(old.status).toBe("missing");
    expect(r.gpus.filter((g) => g.status !== "missing")).toHaveLength(4);
    const back = await registerNode(agent(cluster.id), { hostname: node.hostname, gpus: inv });
    expect(back.gpus.find((g) => g.uuid === inv[3]!.uuid)!.status).toBe("available");
    expect(back.gpus.find((g) => g.uuid === replacement.uuid)!.status).toBe("missing");
  });

  it("never lets an agent register into, or claim GPUs of, another cluster", async () => {
    const { inv, cluster } = await freshNode(2);
    const other = await makeCluster();
    expect(await codeOf(registerNode(agent(other.id), { hostname: unique("h"), cluster_id: cluster.id, gpus: [] }))).toBe("forbidden");
    const err = await registerNode(agent(other.id), { hostname: unique("thief"), gpus: [inv[0]!] }).catch((e) => e);
    expect(err.code).toBe("conflict");
    expect(err.details[0].path).toBe("gpus[0].uuid");
    expect(await db().node.count({ where: { clusterId: other.id } })).toBe(0);
    expect((await db().gpu.findUniqueOrThrow({ where: { uuid: inv[0]!.uuid }, include: { node: true } })).node.clusterId).toBe(cluster.id);
  });

  it("requires an operator to name an existing cluster", async () => {
    const err = await registerNode(operator, { hostname: unique("h"), gpus: [] }).catch((e) => e);
    expect(err.details[0].path).toBe("cluster_id");
    const cluster = await makeCluster();
    expect((await registerNode(operator, { hostname: unique("h"), cluster_id: cluster.id, gpus: [] })).created).toBe(true);
  });

  it("survives parallel registrations of the same node (agent restarts racing)", async () => {
    const cluster = await makeCluster();
    const hostname = unique("race");
    const inv = inventory(8);
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => registerNode(agent(cluster.id), { hostname, gpus: inv })));
    expect(results.filter((r) => r.status === "fulfilled").length).toBeGreaterThanOrEqual(1);
    expect(await db().node.count({ where: { clusterId: cluster.id } })).toBe(1);
    expect(await db().gpu.count({ where: { node: { clusterId: cluster.id } } })).toBe(8);
  });
});

describe("heartbeats and lifecycle", () => {
  it("makes a registered node available, records the transition, and answers with assignments", async () => {
    const { cluster, node } = await freshNode();
    const hb = await recordHeartbeat(agent(cluster.id), node.id, {});
    expect(hb.node.status).toBe("available");
    expect(hb.assignments).toEqual([]);
    const events = await db().nodeEvent.findMany({ where: { nodeId: node.id } });
    expect(events.map((e) => [e.fromStatus, e.toStatus])).toEqual([["registered", "available"]]);
  });

  it("refuses another cluster's agent with not found", async () => {
    const { node } = await freshNode();
    const other = await makeCluster();
    expect(await codeOf(recordHeartbeat(agent(other.id), node.id, {}))).toBe("not_found");
    expect((await db().node.findUniqueOrThrow({ where: { id: node.id } })).lastHeartbeatAt).toBeNull();
  });

  it("marks a GPU unhealthy on a fatal XID (sticky until an operator returns the node) but not on application XIDs", async () => {
    const { cluster, node, inv } = await freshNode(3);
    await recordHeartbeat(agent(cluster.id), node.id, {
      gpus: [
        { uuid: inv[0]!.uuid, healthy: true, xid_errors: [79] },
        { uuid: inv[1]!.uuid, healthy: true, xid_errors: [13, 31, 43] },
        { uuid: inv[2]!.uuid, healthy: false },
      ],
    });
    const gpus = async () => Object.fromEntries((await db().gpu.findMany({ where: { nodeId: node.id } })).map((g) => [g.uuid, g]));
    let g = await gpus();
    expect(g[inv[0]!.uuid]).toMatchObject({ status: "unhealthy", unhealthyReason: "fatal_xid:79", lastXid: 79 });
    expect(g[inv[1]!.uuid]).toMatchObject({ status: "available", lastXid: 43 });
    expect(g[inv[2]!.uuid]).toMatchObject({ status: "unhealthy", unhealthyReason: "agent_reported" });

    await recordHeartbeat(agent(cluster.id), node.id, { gpus: inv.map((x) => ({ uuid: x.uuid, healthy: true })) });
    g = await gpus();
    expect(g[inv[0]!.uuid]!.status).toBe("unhealthy"); // hardware fault: sticky
    expect(g[inv[2]!.uuid]!.status).toBe("available"); // agent's own report: clears

    await changeNodeStatus(operator, node.id, "quarantined", "XID 79");
    await changeNodeStatus(operator, node.id, "available", "GPU reseated");
    expect((await gpus())[inv[0]!.uuid]!.status).toBe("available");
  });

  it("marks a GPU unhealthy on uncorrectable ECC errors or a failed row remap, and writes nothing for healthy reports", async () => {
    const { cluster, node, inv } = await freshNode(3);
    const before = await db().gpu.findUniqueOrThrow({ where: { uuid: inv[2]!.uuid } });
    await recordHeartbeat(actorFor(agentPrincipal(cluster.id)), node.id, {
      gpus: [
        { uuid: inv[0]!.uuid, healthy: true, ecc_uncorrected: 3 },
        { uuid: inv[1]!.uuid, healthy: true, remap_failure: true },
        { uuid: inv[2]!.uuid, healthy: true },
      ],
    });
    const g = Object.fromEntries((await db().gpu.findMany({ where: { nodeId: node.id } })).map((x) => [x.uuid, x]));
    expect(g[inv[0]!.uuid]).toMatchObject({ status: "unhealthy", unhealthyReason: "ecc_uncorrected", eccUncorrected: 3 });
    expect(g[inv[1]!.uuid]).toMatchObject({ status: "unhealthy", unhealthyReason: "remap_failure", remapFailure: true });
    expect(g[inv[2]!.uuid]!.updatedAt).toEqual(before.updatedAt);
  });

  it("refuses impossible operator transitions with invalid_transition and changes nothing", async () => {
    const { node } = await freshNode();
    expect(await codeOf(changeNodeStatus(operator, node.id, "draining"))).toBe("invalid_transition");
    expect((await db().node.findUniqueOrThrow({ where: { id: node.id } })).status).toBe("registered");
    expect(await codeOf(changeNodeStatus(actorFor(agentPrincipal(node.clusterId)), node.id, "quarantined"))).toBe("forbidden");
  });
});

describe("offline detection", () => {
  it("marks silent nodes offline and the next heartbeat returns each to where it was", async () => {
    const a = await freshNode(1);
    const m = await freshNode(1);
    const q = await freshNode(1);
    for (const n of [a, m, q]) await recordHeartbeat(agent(n.cluster.id), n.node.id, {});
    await changeNodeStatus(operator, m.node.id, "maintenance");
    await changeNodeStatus(operator, q.node.id, "quarantined");
    for (const n of [a, m, q]) await backdateHeartbeat(n.node.id, 600);

    // test files share the database, so another file's sweep may be the one that marks them
    for (const n of [a, m, q]) await sweepUntilOffline(n.node.id);
    for (const n of [a, m, q]) expect((await db().node.findUniqueOrThrow({ where: { id: n.node.id } })).status).toBe("offline");

    const statusAfterHeartbeat = async (n: typeof a) => (await recordHeartbeat(agent(n.cluster.id), n.node.id, {})).node.status;
    expect(await statusAfterHeartbeat(a)).toBe("available");
    expect(await statusAfterHeartbeat(m)).toBe("maintenance");
    expect(await statusAfterHeartbeat(q)).toBe("quarantined");
    const events = await db().nodeEvent.findMany({ where: { nodeId: m.node.id }, orderBy: { id: "asc" } });
    expect(events.map((e) => e.toStatus)).toEqual(["available", "maintenance", "offline", "maintenance"]);
  });

  it("leaves fresh nodes alone and does not mark an offline node twice", async () => {
    const n = await freshNode(1);
    await recordHeartbeat(agent(n.cluster.id), n.node.id, {});
    const offlineEvents = () => db().nodeEvent.count({ where: { nodeId: n.node.id, toStatus: "offline" } });
    expect((await markOfflineNodes(300)).node_ids).not.toContain(n.node.id);
    expect(await offlineEvents()).toBe(0);
    await backdateHeartbeat(n.node.id, 600);
    // whichever sweep marks it (test files share the database), it is marked once
    await sweepUntilOffline(n.node.id);
    expect(await offlineEvents()).toBe(1);
    expect((await markOfflineNodes(300)).node_ids).not.toContain(n.node.id);
    expect(await offlineEvents()).toBe(1);
    expect((await db().node.findUniqueOrThrow({ where: { id: n.node.id } })).status).toBe("offline");
  });

  it("the database refuses an offline node that forgot where it was", async () => {
    const n = await freshNode(1);
    await expect(db().$executeRaw`UPDATE nodes SET status = 'offline' WHERE id = ${n.node.id}::uuid`).rejects.toThrow(
      /nodes_offline_memory_check/,
    );
  });

  it("the database refuses two present GPUs in one slot", async () => {
    const n = await freshNode(2);
    await expect(db().$executeRaw`UPDATE gpus SET index = 0 WHERE node_id = ${n.node.id}::uuid AND index = 1`).rejects.toThrow(
      /gpus_node_slot_present_key/,
    );
  });
});
