import { describe, expect, it } from "vitest";
import { db, pool } from "@/lib/db/client";
import { createPod } from "@/lib/pods/create-pod";
import { createPodBody } from "@/lib/pods/schemas";
import { createReservation } from "@/lib/reservations/create-reservation";
import { reservationJson } from "@/lib/reservations/queries";
import { lockForTransaction } from "@/lib/db/locks";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { asTenantAdmin, availableFleet, makeTenant, unique } from "../support/fixtures";
import { codeOf } from "../support/outcomes";

// Pods and whole-node reservations. A pod declares no end and is billed on demand, so it never goes
// to a node a reservation holds now (anyone's, its own tenant's too) or books later, and a node a
// pod holds is never booked. The scheduler keeps to this and the database refuses the rest.

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const pod = (tenantId: string, gpuType: string, gpuCount: number) =>
  createPod(
    asTenantAdmin(tenantId),
    createPodBody.parse({ name: unique("pod"), gpu_type: gpuType, gpu_count: gpuCount, image: "runpod/pytorch:2.4.0" }),
  );

describe("pods and reservations", () => {
  it("parallel cycles place pods only on nodes no reservation holds or books, the owner's own included", async () => {
    const { gpuType, nodes } = await availableFleet(3, 4, "PR");
    const owner = await makeTenant(64);
    const other = await makeTenant(64);
    const now = Date.now();
    const held = reservationJson(
      await createReservation(asTenantAdmin(owner.id), { gpu_type: gpuType, node_count: 1, starts_at: iso(now), ends_at: iso(now + HOUR) }),
    );
    const later = reservationJson(
      await createReservation(asTenantAdmin(owner.id), {
        gpu_type: gpuType,
        node_count: 1,
        starts_at: iso(now + HOUR / 2),
        ends_at: iso(now + HOUR),
      }),
    );
    const reservedNodes = new Set([...held.node_ids, ...later.node_ids]);
    expect(reservedNodes.size).toBe(2);
    const free = nodes.map((n) => n.node.id).find((id) => !reservedNodes.has(id))!;

    const pods = await Promise.all([
      pod(other.id, gpuType, 4),
      pod(other.id, gpuType, 2),
      pod(owner.id, gpuType, 2),
      pod(owner.id, gpuType, 4),
    ]);
    await Promise.all([runSchedulerCycle("pr-a"), runSchedulerCycle("pr-b"), runSchedulerCycle("pr-c")]);
    await runSchedulerCycle("pr-d");

    const placed = await db().pod.findMany({
      where: { id: { in: pods.map((p) => p.id) }, status: "starting" },
      select: { id: true, nodeId: true },
    });
    expect(placed.length).toBeGreaterThan(0);
    for (const p of placed) expect(p.nodeId).toBe(free);
    // the one free node has 4 GPUs: what was placed fits on it, and no GPU of a reserved node went to a pod
    const { rows } = await pool().query<{ n: number }>(
      `SELECT count(*)::int AS n FROM gpus WHERE node_id = ANY($1::uuid[]) AND allocated_pod_id IS NOT NULL`,
      [[...reservedNodes]],
    );
    expect(rows[0]!.n).toBe(0);
    const waiting = await db().pod.findMany({
      where: { id: { in: pods.map((p) => p.id) }, status: "pending" },
      select: { pendingReason: true },
    });
    expect(waiting.length).toBe(pods.length - placed.length);
  });

  it("the database refuses a pod's GPU on a reserved node, and a booking over a node a pod holds", async () => {
    const { gpuType, nodes } = await availableFleet(2, 2, "PQ");
    const owner = await makeTenant(64);
    const other = await makeTenant(64);
    const now = Date.now();
    const held = reservationJson(
      await createReservation(asTenantAdmin(owner.id), { gpu_type: gpuType, node_count: 1, starts_at: iso(now), ends_at: iso(now + HOUR) }),
    );
    const reservedNode = held.node_ids[0]!;
    const freeNode = nodes.map((n) => n.node.id).find((id) => id !== reservedNode)!;

    // bypassing the scheduler: a pod allocated straight onto the reserved node is refused
    const direct = await pod(other.id, gpuType, 1);
    const c = await pool().connect();
    try {
      await c.query("BEGIN");
      // as every allocator does: no scheduling cycle (this file's or another's) runs meanwhile
      await lockForTransaction(c, "scheduler");
      await c.query(`UPDATE pods SET status = 'starting', attempts = 1, fence = gen_random_uuid(), node_id = $2 WHERE id = $1`, [
        direct.id,
        reservedNode,
      ]);
      const refused = await c
        .query(`UPDATE gpus SET allocated_pod_id = $1 WHERE id = (SELECT id FROM gpus WHERE node_id = $2 LIMIT 1)`, [
          direct.id,
          reservedNode,
        ])
        .then(
          () => "allowed",
          (e: { message: string }) => e.message,
        );
      expect(refused).toMatch(/reservation .* holds or books: a pod declares no end/);
    } finally {
      await c.query("ROLLBACK");
      c.release();
    }

    // the free node takes the pod; then nobody can book that node while the pod holds it
    await runSchedulerCycle("pq");
    expect(await db().pod.findUniqueOrThrow({ where: { id: direct.id }, select: { status: true, nodeId: true } })).toEqual({
      status: "starting",
      nodeId: freeNode,
    });
    expect(
      await codeOf(
        createReservation(asTenantAdmin(owner.id), {
          gpu_type: gpuType,
          node_count: 1,
          starts_at: iso(now + 60_000),
          ends_at: iso(now + HOUR),
        }),
      ),
    ).toBe("no_capacity");
    const c2 = await pool().connect();
    try {
      await c2.query("BEGIN");
      await lockForTransaction(c2, "scheduler");
      const refused = await c2.query(`UPDATE reservation_nodes SET node_id = $2 WHERE reservation_id = $1`, [held.id, freeNode]).then(
        () => "allowed",
        (e: { message: string }) => e.message,
      );
      expect(refused).toMatch(/runs pod .* declares no end/);
    } finally {
      await c2.query("ROLLBACK");
      c2.release();
    }
  });
});
