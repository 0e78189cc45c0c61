import { describe, expect, it } from "vitest";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import type { CreateEndpointInput } from "@/lib/endpoints/schemas";
import { createReservation } from "@/lib/reservations/create-reservation";
import { reservationJson } from "@/lib/reservations/queries";
import { tenantFigures } from "@/lib/tenants/queries";
import { actorFor, availableFleet, makeTenant, tenantAdminPrincipal, unique } from "../support/fixtures";

// The endpoint reconciler places replicas from the same capacity reads as the scheduler's cycle
// (lib/scheduler/capacity-queries.ts): free GPUs, the nodes reservations hold now or book later,
// and the quota in use. A replica declares no end, so it never goes to a node booked later; a node
// held now serves only endpoints that name its reservation; replicas outside one count on the quota.

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

function spec(gpuType: string, o: Partial<CreateEndpointInput> = {}): CreateEndpointInput {
  return {
    name: unique("ep"),
    model: "meta-llama/Llama-3.1-8B-Instruct",
    gpu_type: gpuType,
    gpus_per_replica: 2,
    replicas: 2,
    autoscale_metric: "none",
    cooldown_s: 300,
    ...o,
  };
}

describe("replica placement and reservations", () => {
  it("keeps replicas off nodes held or booked by reservations, except an endpoint's own reservation, and counts the rest on the quota", async () => {
    const { gpuType, nodes } = await availableFleet(3, 8, "V");
    const owner = await makeTenant(64);
    const other = await makeTenant(64);
    const asOwner = actorFor(tenantAdminPrincipal(owner.id));
    const now = Date.now();
    const held = reservationJson(
      await createReservation(asOwner, { gpu_type: gpuType, node_count: 1, starts_at: iso(now), ends_at: iso(now + HOUR) }),
    );
    const later = reservationJson(
      await createReservation(actorFor(tenantAdminPrincipal(other.id)), {
        gpu_type: gpuType,
        node_count: 1,
        starts_at: iso(now + HOUR / 2),
        ends_at: iso(now + HOUR),
      }),
    );
    const [heldNode] = held.node_ids;
    const [laterNode] = later.node_ids;
    const freeNode = nodes.map((n) => n.node.id).find((id) => id !== heldNode && id !== laterNode)!;
    expect(new Set([heldNode, laterNode, freeNode]).size).toBe(3);

    // on demand: only the node no reservation holds or books, even for the holder's own tenant
    // (a fifth replica would fit on the held or the booked node only: it waits)
    const onDemand = await createEndpoint(asOwner, spec(gpuType, { replicas: 5 }));
    expect(onDemand.replicas.filter((r) => r.status !== "stopped").map((r) => r.nodeId)).toEqual([freeNode, freeNode, freeNode, freeNode]);

    // naming the reservation: its node, and nothing counted on the quota for it
    const inside = await createEndpoint(asOwner, spec(gpuType, { replicas: 2, reservation_id: held.id }));
    expect(inside.replicas.filter((r) => r.status !== "stopped").map((r) => r.nodeId)).toEqual([heldNode, heldNode]);
    // 8 GPUs held by the reservation and 8 on demand; the replicas inside it are the reservation's
    expect((await tenantFigures(owner.id)).gpu_in_use).toBe(16);
  });
});
