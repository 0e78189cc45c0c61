import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { OperatorPrincipal, TenantPrincipal } from "@/lib/auth/principal";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { nodePageData } from "@/lib/fleet/node-page";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { parseTimeRange } from "@/lib/metrics/time-range";
import { createReservation } from "@/lib/reservations/create-reservation";
import { reservationPageData } from "@/lib/reservations/reservation-page";
import { reservationsPageData } from "@/lib/reservations/reservations-page";
import {
  actorFor,
  agentPrincipal,
  inventory,
  makeCluster,
  makeTenant,
  tenantAdminPrincipal,
  tenantMemberPrincipal,
  unique,
} from "../support/fixtures";

// The pages' view models against the database: what the pages used to compute themselves.

const operator: OperatorPrincipal = { kind: "operator", label: "test operator" };

describe("a node's page", () => {
  it("is null for a node that does not exist", async () => {
    expect(await nodePageData(operator, randomUUID(), parseTimeRange({}, new Date(), "1h"))).toBeNull();
  });

  it("offers the lifecycle actions its state allows, each with its impact, and follows a change", async () => {
    const cluster = await makeCluster();
    const { node } = await registerNode(actorFor(agentPrincipal(cluster.id)), {
      hostname: unique("node"),
      pod: "p1",
      rack: "r1",
      gpus: inventory(4),
    });
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

describe("a tenant's reservation pages", () => {
  it("let the organisation's admins cancel or extend a booking that has not begun, and members only see it", async () => {
    const cluster = await makeCluster();
    const gpuType = unique("V").replace(/-/g, "").slice(0, 12).toUpperCase();
    const agent = actorFor(agentPrincipal(cluster.id));
    const reg = await registerNode(agent, {
      hostname: unique("node"),
      pod: "pod-1",
      rack: "rack-1a",
      capabilities: { containers: true, runtime: "docker test" },
      gpus: inventory(8, gpuType),
    });
    await recordHeartbeat(agent, reg.node.id, {});
    const t = await makeTenant(64);
    const admin = tenantAdminPrincipal(t.id) as TenantPrincipal;
    const member = tenantMemberPrincipal(t.id) as TenantPrincipal;
    const now = Date.now();
    const r = await createReservation(actorFor(admin), {
      gpu_type: gpuType,
      node_count: 1,
      starts_at: new Date(now + 3_600_000).toISOString(),
      ends_at: new Date(now + 7_200_000).toISOString(),
    });

    expect(await reservationPageData(admin, r.id)).toMatchObject({ mayEnd: "cancel", mayExtend: true, hours: 1 });
    expect(await reservationPageData(member, r.id)).toMatchObject({ mayEnd: null, mayExtend: false });
    const other = await makeTenant(8);
    expect(await reservationPageData(tenantAdminPrincipal(other.id) as TenantPrincipal, r.id)).toBeNull();

    const list = await reservationsPageData(admin, { gpu_type: gpuType });
    expect(list).toMatchObject({ gpuType, mayBook: true });
    expect(list.live.map((x) => x.id)).toEqual([r.id]);
    expect(list.activeNow).toEqual([]);
    expect((await reservationsPageData(member, {})).mayBook).toBe(false);
  });
});
