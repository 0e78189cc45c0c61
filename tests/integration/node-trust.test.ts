import { describe, expect, it } from "vitest";
import { acknowledgeAlert } from "@/lib/alerts/acknowledge-alert";
import { evaluateAlerts } from "@/lib/alerts/evaluate-alerts";
import { db } from "@/lib/db/client";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { reportReplicaAddress } from "@/lib/endpoints/report-replica-address";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { createPod } from "@/lib/pods/create-pod";
import { reportPodStatus } from "@/lib/pods/report-pod-status";
import { createPodBody } from "@/lib/pods/schemas";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import {
  actorFor,
  agentPrincipal,
  availableFleet,
  inventory,
  makeCluster,
  makeTenant,
  operatorPrincipal,
  tenantAdminPrincipal,
  unique,
} from "../support/fixtures";
import { codeAndFieldOf } from "../support/outcomes";
import { inAlertEvaluationTurn } from "../support/test-turns";

// What a compromised node's agent can no longer do (issue 27): move another node's address (with
// the cluster's shared key), or report a workload's port outside the agents' published range.
// This file's own range, read by lib/env on first use.
process.env.AGENT_PUBLISHED_PORTS = "40000-44999";

const ip = () => `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

describe("a node's address", () => {
  it("is set by whoever registers the node first; afterwards only its own node-bound key or an operator moves it, audited and alerting", async () => {
    const cluster = await makeCluster();
    const shared = actorFor(agentPrincipal(cluster.id));
    const hostname = unique("victim");
    const first = ip();
    const reg = await registerNode(shared, { hostname, address: first, capabilities: { containers: true }, gpus: inventory(1, "TRUST") });
    expect(reg.node.address).toBe(first);
    // a neighbour holding the cluster's key re-registers the victim's hostname at an address of its own
    const hijack = ip();
    expect(await codeAndFieldOf(registerNode(shared, { hostname, address: hijack, gpus: inventory(1, "TRUST") }))).toBe("conflict:address");
    expect((await db().node.findUniqueOrThrow({ where: { id: reg.node.id } })).address).toBe(first);
    // …or a key bound to another node of the cluster
    const other = await registerNode(shared, { hostname: unique("neighbour"), gpus: [] });
    expect(
      await codeAndFieldOf(registerNode(actorFor(agentPrincipal(cluster.id, other.node.id)), { hostname, address: hijack, gpus: [] })),
    ).toBe("forbidden");
    // re-registering without one, or with the same, changes nothing and is fine
    expect((await registerNode(shared, { hostname, gpus: inventory(1, "TRUST") })).node.address).toBe(first);
    expect((await registerNode(shared, { hostname, address: first, gpus: inventory(1, "TRUST") })).node.address).toBe(first);
    expect(await db().auditLog.count({ where: { targetId: reg.node.id, action: "node.address_changed" } })).toBe(0);

    // the node's own bound key moves it: audited, and operators are alerted
    const moved = ip();
    const own = actorFor(agentPrincipal(cluster.id, reg.node.id));
    expect((await registerNode(own, { hostname, address: moved, gpus: inventory(1, "TRUST") })).node.address).toBe(moved);
    const audit = await db().auditLog.findFirstOrThrow({ where: { targetId: reg.node.id, action: "node.address_changed" } });
    expect(audit.details).toMatchObject({ from: first, to: moved });
    const alert = await db().alertEvent.findFirstOrThrow({
      where: { ruleType: "node_address_changed", nodeId: reg.node.id, status: "firing" },
    });
    expect(alert).toMatchObject({ severity: "warning", tenantId: null, details: { from: first, to: moved } });
    expect(await db().notification.count({ where: { alertEventId: alert.id } })).toBeGreaterThan(0);
    // acknowledged, it resolves
    await acknowledgeAlert(actorFor(operatorPrincipal), alert.id);
    await inAlertEvaluationTurn(() => evaluateAlerts());
    expect((await db().alertEvent.findUniqueOrThrow({ where: { id: alert.id } })).status).toBe("resolved");
    // an operator may move it too
    const byOperator = ip();
    expect(
      (
        await registerNode(actorFor(operatorPrincipal), {
          hostname,
          cluster_id: cluster.id,
          address: byOperator,
          gpus: inventory(1, "TRUST"),
        })
      ).node.address,
    ).toBe(byOperator);
    expect(await db().auditLog.count({ where: { targetId: reg.node.id, action: "node.address_changed" } })).toBe(2);
  });

  it("a node registered without one gets one from its own key or an operator only, never from the shared key", async () => {
    const cluster = await makeCluster();
    const shared = actorFor(agentPrincipal(cluster.id));
    const hostname = unique("quiet");
    const reg = await registerNode(shared, { hostname, gpus: [] });
    expect(await codeAndFieldOf(registerNode(shared, { hostname, address: ip(), gpus: [] }))).toBe("conflict:address");
    const set = ip();
    expect((await registerNode(actorFor(agentPrincipal(cluster.id, reg.node.id)), { hostname, address: set, gpus: [] })).node.address).toBe(
      set,
    );
  });
});

describe("ports a node reports", () => {
  it("are the agents' published range only: a replica's guard port and a pod's ports outside it are refused, naming them", async () => {
    const { cluster, gpuType } = await availableFleet(2, 2, "PR");
    const t = await makeTenant(4);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const ep = await createEndpoint(asT, {
      name: unique("ep"),
      model: "m",
      gpu_type: gpuType,
      gpus_per_replica: 1,
      replicas: 1,
      cluster_id: cluster.id,
      autoscale_metric: "none",
      cooldown_s: 300,
    });
    const r = ep.replicas.find((x) => x.status !== "stopped")!;
    const agent = agentPrincipal(cluster.id, r.nodeId!);
    for (const port of [22, 5432, 8080, 39_999, 45_000, 65_535])
      expect(
        await codeAndFieldOf(reportReplicaAddress(agent, ep.id, r.id, { attempt: 1, fence: r.fence, host_port: port })),
        String(port),
      ).toBe("validation_failed:host_port");
    expect(await codeAndFieldOf(reportReplicaAddress(agent, ep.id, r.id, { attempt: 1, fence: r.fence, host_port: 40_123 }))).toBe("ok");

    const pod = await createPod(
      asT,
      createPodBody.parse({
        name: unique("p"),
        gpu_type: gpuType,
        gpu_count: 1,
        image: "ubuntu:24.04",
        ports: [8888],
        cluster_id: cluster.id,
      }),
    );
    await runSchedulerCycle("ports");
    const placed = await db().pod.findUniqueOrThrow({ where: { id: pod.id }, select: { nodeId: true } });
    const beat = await recordHeartbeat(actorFor(agentPrincipal(cluster.id)), placed.nodeId!, {});
    const a = beat.assignments.find((x) => x.kind === "pod" && x.pod_id === pod.id)!;
    const report = (host_port: number) =>
      reportPodStatus(agentPrincipal(cluster.id), pod.id, {
        attempt: a.attempt,
        fence: a.fence,
        status: "running",
        ports: [{ container_port: 8888, host_port }],
      });
    expect(await codeAndFieldOf(report(22))).toBe("validation_failed:ports[0].host_port");
    expect(await codeAndFieldOf(report(50_000))).toBe("validation_failed:ports[0].host_port");
    expect(await codeAndFieldOf(report(44_999))).toBe("ok");
  });
});
