import { describe, expect, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { balanceOf, depositFunds } from "@/lib/billing/ledger";
import { accrueRunningUsage } from "@/lib/billing/meter";
import { db, pool } from "@/lib/db/client";
import { createReservation } from "@/lib/reservations/create-reservation";
import { endReservation } from "@/lib/reservations/end-reservation";
import { maintainReservations } from "@/lib/reservations/maintain-reservations";
import { createTenant } from "@/lib/tenants/create-tenant";
import { actorFor, availableFleet, tenantAdminPrincipal, unique } from "../support/fixtures";

// A prepaid tenant's reservation is paid for its whole window when booked (issue 29), and every
// segment its holdings bill is still charged exactly once (the soak's run_not_billed_exactly_once):
// each charge is drawn from the up-front payment, and what was not drawn comes back when the
// reservation ends. The balance never pays twice, and in the end it paid exactly what was billed.

const RATE = 3600; // cents per GPU-hour: a cent per GPU-second
const HOUR = 3_600_000;
const FUNDS = 50_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function setup(nodes = 2, gpus = 2) {
  const f = await availableFleet(nodes, gpus, "L");
  await db().gpuRate.create({ data: { gpuType: f.gpuType, centsPerHour: RATE, effectiveFrom: new Date("2020-01-01"), createdBy: "test" } });
  const tenant = await createTenant(systemActor, { name: unique("prepaid"), gpu_quota: 64, billing_email: null, billing_mode: "prepaid" });
  await depositFunds(systemActor, tenant.id, FUNDS);
  return { f, tenant, as: actorFor(tenantAdminPrincipal(tenant.id)) };
}

/** The reservation's holding segments with the charge each one has, as the soak reads them. */
async function segments(reservationId: string) {
  const { rows } = await pool().query<{ id: string; amount: number; charged: number | null; charges: number }>(
    `SELECT u.id::text, u.amount_cents::float8 AS amount, min(l.amount_cents)::float8 AS charged, count(l.id)::int AS charges
       FROM usage_events u LEFT JOIN ledger_entries l ON l.usage_event_id = u.id
      WHERE u.reservation_id = $1::uuid AND u.reservation_node_id IS NOT NULL AND u.settlement = 'prepaid'
      GROUP BY u.id ORDER BY u.started_at`,
    [reservationId],
  );
  return rows;
}

function expectEachChargedOnce(segs: Awaited<ReturnType<typeof segments>>) {
  for (const s of segs.filter((s) => s.amount > 0)) {
    expect(s.charges, `segment ${s.id}`).toBe(1);
    expect(s.charged, `segment ${s.id}`).toBe(-s.amount);
  }
}

const total = (segs: Awaited<ReturnType<typeof segments>>) => segs.reduce((n, s) => n + s.amount, 0);

describe("segments of a reservation paid up front", () => {
  it("are each charged once, from the up-front payment; an early release settles to exactly what was billed", async () => {
    const { f, tenant, as } = await setup();
    const now = Date.now();
    const r = await createReservation(as, {
      gpu_type: f.gpuType,
      node_count: 1,
      starts_at: new Date(now).toISOString(),
      ends_at: new Date(now + HOUR).toISOString(),
    });
    const paid = 2 * 3600; // one node of 2 GPUs for an hour
    expect(await balanceOf(tenant.id)).toBe(FUNDS - paid);
    await sleep(1500);
    await accrueRunningUsage({ tenantId: tenant.id, prepaidEveryS: 0 });
    const running = await segments(r.id);
    expect(total(running)).toBeGreaterThan(0);
    expectEachChargedOnce(running);
    // the charges are drawn from what was paid: the balance does not pay twice
    expect(await balanceOf(tenant.id)).toBe(FUNDS - paid);

    await sleep(1100);
    await endReservation(as, r.id);
    const ended = await segments(r.id);
    expect(ended.length).toBeGreaterThan(running.length); // the final segment
    expectEachChargedOnce(ended);
    expect(await balanceOf(tenant.id)).toBe(FUNDS - total(ended));
  });

  it("settle when the reservation reaches its end, and a cancellation gives everything back", async () => {
    // three nodes: the two the first booking held are between tenants (wiped and attested) when the second is made
    const { f, tenant, as } = await setup(3);
    const now = Date.now();
    const r = await createReservation(as, {
      gpu_type: f.gpuType,
      node_count: 2,
      starts_at: new Date(now).toISOString(),
      ends_at: new Date(now + HOUR).toISOString(),
    });
    await maintainReservations(); // it starts
    await sleep(1200);
    await accrueRunningUsage({ tenantId: tenant.id, prepaidEveryS: 0 });
    // its end comes early (as if the hour had passed); the sweep completes it
    await pool().query(`UPDATE reservation_nodes SET ends_at = now() WHERE reservation_id = $1::uuid`, [r.id]);
    await pool().query(`UPDATE reservations SET ends_at = now() WHERE id = $1::uuid`, [r.id]);
    await maintainReservations();
    expect((await db().reservation.findUniqueOrThrow({ where: { id: r.id } })).status).toBe("completed");
    const segs = await segments(r.id);
    expect(segs.length).toBeGreaterThanOrEqual(4); // an accrual and a final segment per node
    expectEachChargedOnce(segs);
    expect(await balanceOf(tenant.id)).toBe(FUNDS - total(segs));

    const before = await balanceOf(tenant.id);
    const later = await createReservation(as, {
      gpu_type: f.gpuType,
      node_count: 1,
      starts_at: new Date(now + 5 * HOUR).toISOString(),
      ends_at: new Date(now + 7 * HOUR).toISOString(),
    });
    expect(await balanceOf(tenant.id)).toBe(before - 2 * 7200);
    await endReservation(as, later.id);
    expect(await balanceOf(tenant.id)).toBe(before);
  });

  it("are charged in full once the up-front payment is spent: never silently nothing", async () => {
    const { f, tenant, as } = await setup(1, 2);
    const now = Date.now();
    const r = await createReservation(as, {
      gpu_type: f.gpuType,
      node_count: 1,
      starts_at: new Date(now).toISOString(),
      ends_at: new Date(now + HOUR).toISOString(),
    });
    // the rate rises after booking: the segments cost more than was paid up front
    await db().gpuRate.create({
      data: { gpuType: f.gpuType, centsPerHour: 10_000_000, effectiveFrom: new Date(now - 60_000), createdBy: "test" },
    });
    await sleep(2000);
    await endReservation(as, r.id);
    const segs = await segments(r.id);
    expect(total(segs)).toBeGreaterThan(2 * 3600);
    expectEachChargedOnce(segs);
    expect(await balanceOf(tenant.id)).toBe(FUNDS - total(segs));
  });

  it("parallel accruals of one reservation's holdings never draw more than was paid", async () => {
    const { f, tenant, as } = await setup(4, 2);
    const now = Date.now();
    const r = await createReservation(as, {
      gpu_type: f.gpuType,
      node_count: 4,
      starts_at: new Date(now).toISOString(),
      ends_at: new Date(now + HOUR).toISOString(),
    });
    const paid = 4 * 2 * 3600;
    // a raised rate makes the four holdings' first segments cost more than was paid, together
    await db().gpuRate.create({
      data: { gpuType: f.gpuType, centsPerHour: 10_000_000, effectiveFrom: new Date(now - 60_000), createdBy: "test" },
    });
    const holdings = await db().reservationNode.findMany({ where: { reservationId: r.id } });
    await sleep(2000);
    // each in a transaction of its own that stays open a moment after billing: they overlap
    await Promise.all(
      holdings.map(async (h) => {
        const c = await pool().connect();
        try {
          await c.query("BEGIN");
          await c.query(`SELECT bill_reservation_segment($1::uuid, 'accrual', now())`, [h.id]);
          await sleep(300);
          await c.query("COMMIT");
        } finally {
          c.release();
        }
      }),
    );
    const segs = await segments(r.id);
    expect(total(segs)).toBeGreaterThan(paid);
    expectEachChargedOnce(segs);
    const drawn = await db().ledgerEntry.aggregate({
      where: { reservationId: r.id, kind: "reservation_return" },
      _sum: { amountCents: true },
    });
    expect(Number(drawn._sum.amountCents)).toBe(paid);
    expect(await balanceOf(tenant.id)).toBe(FUNDS - total(segs));
    await endReservation(as, r.id);
    const ended = await segments(r.id);
    expectEachChargedOnce(ended);
    expect(await balanceOf(tenant.id)).toBe(FUNDS - total(ended));
  });

  it("the meter and a release racing on one reservation neither deadlock nor bill twice", async () => {
    const { f, tenant, as } = await setup(2, 2);
    const now = Date.now();
    const r = await createReservation(as, {
      gpu_type: f.gpuType,
      node_count: 2,
      starts_at: new Date(now).toISOString(),
      ends_at: new Date(now + HOUR).toISOString(),
    });
    await sleep(1200);
    // a release holds the reservation (as every path that closes holdings does first) while the meter runs
    const c = await pool().connect();
    try {
      await c.query("BEGIN");
      await c.query(`SELECT id FROM reservations WHERE id = $1::uuid FOR UPDATE`, [r.id]);
      const meter = accrueRunningUsage({ tenantId: tenant.id, prepaidEveryS: 0 });
      await sleep(300);
      await c.query(
        `UPDATE reservation_nodes SET ends_at = now(), closed_at = now(), close_reason = 'released early' WHERE reservation_id = $1::uuid AND closed_at IS NULL`,
        [r.id],
      );
      await c.query("COMMIT");
      await meter;
    } finally {
      c.release();
    }
    await endReservation(as, r.id); // the release settles what was not drawn
    const segs = await segments(r.id);
    expect(segs.filter((s) => s.amount > 0).length).toBeGreaterThanOrEqual(2);
    expectEachChargedOnce(segs);
    expect(await balanceOf(tenant.id)).toBe(FUNDS - total(segs));
  });
});
