import { describe, expect, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { balanceOf, depositFunds } from "@/lib/billing/ledger";
import { accrueRunningUsage } from "@/lib/billing/meter";
import { db, pool } from "@/lib/db/client";
import { changePodState } from "@/lib/pods/change-pod-state";
import { createPod } from "@/lib/pods/create-pod";
import { createPodBody } from "@/lib/pods/schemas";
import { createReservation } from "@/lib/reservations/create-reservation";
import { endReservation } from "@/lib/reservations/end-reservation";
import { extendReservation } from "@/lib/reservations/extend-reservation";
import { createTenant } from "@/lib/tenants/create-tenant";
import { updateTenant } from "@/lib/tenants/update-tenant";
import { actorFor, availableFleet, tenantAdminPrincipal, unique } from "../support/fixtures";
import { codeAndFieldOf, codeOf } from "../support/outcomes";

// Limits a prepaid (self-service) tenant starts with hold against parallel callers and any path
// into the database: concurrent pods, reservation length and count; and a prepaid tenant's
// reservations are paid for their whole window when booked, or refused: nothing runs up a debt.

const RATE = 3600; // cents per GPU-hour: a cent per GPU-second
const HOUR = 3_600_000;

async function prepaid(
  limits: { max_pods?: number | null; max_reservation_hours?: number | null; max_reservations?: number | null },
  funds = 0,
) {
  const tenant = await createTenant(systemActor, { name: unique("prepaid"), gpu_quota: 64, billing_email: null, billing_mode: "prepaid" });
  await updateTenant(systemActor, tenant.id, { limits });
  if (funds) await depositFunds(systemActor, tenant.id, funds);
  return { tenant, as: actorFor(tenantAdminPrincipal(tenant.id)) };
}

async function fleet(nodes = 2, gpus = 2) {
  const f = await availableFleet(nodes, gpus, "L");
  await db().gpuRate.create({ data: { gpuType: f.gpuType, centsPerHour: RATE, effectiveFrom: new Date("2020-01-01"), createdBy: "test" } });
  return f;
}

const pod = (gpuType: string) =>
  createPodBody.parse({ name: unique("pod"), gpu_type: gpuType, gpu_count: 1, image: "runpod/pytorch:2.4.0" });
const window = (fromMs: number, hours: number) => ({
  starts_at: new Date(fromMs).toISOString(),
  ends_at: new Date(fromMs + hours * HOUR).toISOString(),
});

describe("concurrent pods", () => {
  it("parallel creates stop at the limit, a start past it is refused, and the database refuses any other path", async () => {
    const f = await fleet(1, 8);
    // the node is in maintenance: other files' cycles share this database, and one that placed a pod here
    // would leave it stopping (still counted) when this test stops it
    await pool().query("UPDATE nodes SET status = 'maintenance' WHERE id = ANY($1::uuid[])", [f.nodes.map((n) => n.node.id)]);
    const t = await prepaid({ max_pods: 2 }, 100_000);
    const results = await Promise.all(Array.from({ length: 5 }, () => codeOf(createPod(t.as, pod(f.gpuType)))));
    expect(results.filter((r) => r === "ok")).toHaveLength(2);
    expect(results.filter((r) => r === "conflict")).toHaveLength(3);
    const [first] = await db().pod.findMany({ where: { tenantId: t.tenant.id }, orderBy: { createdAt: "asc" } });
    await changePodState(t.as, first!.id, "stop");
    expect(await codeOf(createPod(t.as, pod(f.gpuType)))).toBe("ok"); // the stopped one frees its place
    expect(await codeOf(changePodState(t.as, first!.id, "start"))).toBe("conflict");
    const stray = await db().pod.findFirstOrThrow({ where: { tenantId: t.tenant.id, status: "stopped" } });
    await expect(db().$executeRaw`UPDATE pods SET status = 'pending' WHERE id = ${stray.id}::uuid`).rejects.toThrow(/at most 2 pods/);
    // an operator raises the limit: the start goes through
    await updateTenant(systemActor, t.tenant.id, { limits: { max_pods: 3 } });
    expect(await codeOf(changePodState(t.as, first!.id, "start"))).toBe("ok");
  });
});

describe("reservations of a prepaid tenant", () => {
  it("are no longer than the tenant's limit, and no more of them at once", async () => {
    const f = await fleet(3, 2);
    const t = await prepaid({ max_reservation_hours: 24, max_reservations: 1 }, 1_000_000);
    const start = Date.now() + HOUR;
    expect(await codeAndFieldOf(createReservation(t.as, { gpu_type: f.gpuType, node_count: 1, ...window(start, 25) }))).toBe(
      "validation_failed:ends_at",
    );
    const r = await createReservation(t.as, { gpu_type: f.gpuType, node_count: 1, ...window(start, 2) });
    expect(await codeAndFieldOf(createReservation(t.as, { gpu_type: f.gpuType, node_count: 1, ...window(start + 3 * HOUR, 1) }))).toBe(
      "conflict:node_count",
    );
    expect(await codeAndFieldOf(extendReservation(t.as, r.id, { ends_at: new Date(start + 30 * HOUR).toISOString() }))).toBe(
      "validation_failed:ends_at",
    );
    await expect(
      db().$executeRaw`UPDATE reservations SET ends_at = starts_at + interval '30 hours' WHERE id = ${r.id}::uuid`,
    ).rejects.toThrow(/at most 24 hours/);
  });

  it("pay the whole window up front, or are refused when the balance does not cover it; parallel bookings never overdraw", async () => {
    const f = await fleet(3, 2);
    // one node (2 GPUs) for 2 hours costs 2 × 7200 = 14,400 cents
    const t = await prepaid({ max_reservations: null }, 20_000);
    const start = Date.now() + HOUR;
    expect(await codeAndFieldOf(createReservation(t.as, { gpu_type: f.gpuType, node_count: 1, ...window(start, 3) }))).toBe(
      "conflict:ends_at",
    );
    const outcomes = await Promise.all(
      [0, 1, 2].map((i) => codeOf(createReservation(t.as, { gpu_type: f.gpuType, node_count: 1, ...window(start + i * 10 * HOUR, 2) }))),
    );
    expect(outcomes.sort()).toEqual(["conflict", "conflict", "ok"]);
    expect(await balanceOf(t.tenant.id)).toBe(20_000 - 14_400);
    const r = await db().reservation.findFirstOrThrow({ where: { tenantId: t.tenant.id } });
    expect(r.prepaidCents).toBe(14_400n);
    const entries = await db().ledgerEntry.findMany({ where: { tenantId: t.tenant.id, kind: "reservation" } });
    expect(entries.map((e) => [Number(e.amountCents), e.reservationId])).toEqual([[-14_400, r.id]]);
    // an invoiced tenant books as before, settling as it runs
    const invoiced = await createTenant(systemActor, { name: unique("invoiced"), gpu_quota: 64, billing_email: null });
    const booked = await createReservation(actorFor(tenantAdminPrincipal(invoiced.id)), {
      gpu_type: f.gpuType,
      node_count: 1,
      ...window(start + 40 * HOUR, 2),
    });
    expect((await db().reservation.findUniqueOrThrow({ where: { id: booked.id } })).prepaidCents).toBeNull();
    // and a prepaid tenant's reservation without its payment is refused by the database itself
    await expect(
      db().$executeRaw`INSERT INTO reservations (tenant_id, gpu_type, node_count, starts_at, ends_at, created_by)
                       VALUES (${t.tenant.id}::uuid, ${f.gpuType}, 1, now() + interval '50 hours', now() + interval '51 hours', 'x')`,
    ).rejects.toThrow(/paid up front/);
  });

  it("are not charged twice as they run; an early release settles to what was billed, a cancellation gives all of it back", async () => {
    const f = await fleet(2, 2);
    const t = await prepaid({}, 50_000);
    const now = Date.now();
    const running = await createReservation(t.as, { gpu_type: f.gpuType, node_count: 1, ...window(now, 1) });
    const paid = 2 * 3600; // 2 GPUs, one hour, a cent per GPU-second
    expect(await balanceOf(t.tenant.id)).toBe(50_000 - paid);
    await new Promise((r) => setTimeout(r, 1500));
    await accrueRunningUsage({ tenantId: t.tenant.id, prepaidEveryS: 0 });
    const usage = await db().usageEvent.findMany({ where: { reservationId: running.id } });
    expect(usage.length).toBeGreaterThan(0);
    const billed = usage.reduce((s, u) => s + Number(u.amountCents), 0);
    expect(billed).toBeGreaterThan(0);
    // each segment is charged once, and drawn from what was paid up front: the balance pays once
    const charges = await db().ledgerEntry.findMany({ where: { tenantId: t.tenant.id, kind: "charge" } });
    expect(charges.reduce((s, c) => s + Number(c.amountCents), 0)).toBe(-billed);
    expect(await balanceOf(t.tenant.id)).toBe(50_000 - paid);
    await endReservation(t.as, running.id);
    const all = await db().usageEvent.findMany({ where: { reservationId: running.id } });
    const spent = all.reduce((s, u) => s + Number(u.amountCents), 0);
    expect(spent).toBeLessThan(60);
    expect(await balanceOf(t.tenant.id)).toBe(50_000 - spent);

    const later = await createReservation(t.as, { gpu_type: f.gpuType, node_count: 1, ...window(now + 5 * HOUR, 2) });
    const before = await balanceOf(t.tenant.id);
    await endReservation(t.as, later.id);
    expect(await balanceOf(t.tenant.id)).toBe(before + 2 * 7200);
  });

  it("pay for an extension up front too, or keep their end", async () => {
    const f = await fleet(1, 2);
    const t = await prepaid({}, 2 * 3600 + 100);
    const start = Date.now() + HOUR;
    const r = await createReservation(t.as, { gpu_type: f.gpuType, node_count: 1, ...window(start, 1) });
    expect(await codeAndFieldOf(extendReservation(t.as, r.id, { ends_at: new Date(start + 2 * HOUR).toISOString() }))).toBe(
      "conflict:ends_at",
    );
    await depositFunds(systemActor, t.tenant.id, 7200);
    await extendReservation(t.as, r.id, { ends_at: new Date(start + 2 * HOUR).toISOString() });
    expect((await db().reservation.findUniqueOrThrow({ where: { id: r.id } })).prepaidCents).toBe(14_400n);
    expect(await balanceOf(t.tenant.id)).toBe(100);
  });
});
