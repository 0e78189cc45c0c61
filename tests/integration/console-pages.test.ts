import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { OperatorPrincipal } from "@/lib/auth/principal";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { nodePageData } from "@/lib/fleet/node-page";
import { registerNode } from "@/lib/fleet/register-node";
import { parseTimeRange } from "@/lib/metrics/time-range";
import { actorFor, agentPrincipal, inventory, makeCluster, unique } from "../support/fixtures";

// The node page's view model against the database: what the page used to compute itself.

const operator: OperatorPrincipal = { kind: "operator", label: "test operator" };

describe("a node's page", () => {
  it("is null for a node that does not exist", async () => {
    expect(await nodePageData(operator, randomUUID(), parseTimeRange({}, new Date(), "1h"))).toBeNull();
  });

  it("offers the lifecycle actions its state allows, each with its impact, and follows a change", async () => {
    const cluster = await makeCluster();
    const { node } = await registerNode(actorFor(agentPrincipal(cluster.id)), { hostname: unique("node"), pod: "p1", rack: "r1", gpus: inventory(4) });
    const range = parseTimeRange({}, new Date(), "1h");
    const before = (await nodePageData(operator, node.id, range))!;
    // before its first heartbeat an operator may only quarantine it
    expect(before.allowed).toEqual(["quarantined"]);
    expect(Object.keys(before.impact)).toEqual([...before.allowed]);
    expect(before.gpuCounts).toEqual({ present: 4, unhealthy: 0, missing: 0 });
    expect(before.gpus.every((g) => g.health.score > 0)).toBe(true);

    const target = "quarantined";
    await changeNodeStatus(actorFor(operator), node.id, target, "firmware update");
    const after = (await nodePageData(operator, node.id, range))!;
    expect(after.node.status).toBe(target);
    expect(after.allowed).not.toContain(target);
    expect(after.allowed).toEqual(["available"]);
    expect(after.events.map((e) => [e.toStatus, e.reason, e.actor])).toContainEqual([target, "firmware update", "test operator"]);
  });
});
