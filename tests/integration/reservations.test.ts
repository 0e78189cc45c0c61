import { describe, expect, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { accrueRunningUsage } from "@/lib/billing/meter";
import { generateInvoice } from "@/lib/billing/generate-invoice";
import { db, pool } from "@/lib/db/client";
import { HTTP_STATUS } from "@/lib/errors";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { submitJob } from "@/lib/jobs/submit-job";
import { createReservation } from "@/lib/reservations/create-reservation";
import { endReservation } from "@/lib/reservations/end-reservation";
import { extendReservation } from "@/lib/reservations/extend-reservation";
import { maintainReservations } from "@/lib/reservations/maintain-reservations";
import { getCapacity, getReservationOrThrow, reservationJson } from "@/lib/reservations/queries";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { tenantFigures } from "@/lib/tenants/queries";
import {
  actorFor,
  agentPrincipal,
  asTenantAdmin,
  inventory,
  makeCluster,
  makeTenant,
  operatorPrincipal,
  unique,
} from "../support/fixtures";
import { attestedCluster, driveHandover, FakeNodeAgent } from "../support/handover-agent";
import { codeOf } from "../support/outcomes";

// Whole-node reservations against the real database: booking under contention, quotas, the work
// inside and around them, repairs, and billing. Every test builds a fleet of a GPU type of its own.

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** pods × racks × nodes of `gpus` GPUs each, in one cluster, every node available and running containers. */
async function rackedFleet(layout: { pods: number; racks: number; nodes: number; gpus?: number }) {
  const cluster = await makeCluster();
  const gpuType = unique("R").replace(/-/g, "").slice(0, 12).toUpperCase();
  const agent = actorFor(agentPrincipal(cluster.id));
  const nodes: Array<{ id: string; hostname: string; pod: string; rack: string }> = [];
  for (let p = 1; p <= layout.pods; p++)
    for (let r = 1; r <= layout.racks; r++)
      for (let n = 1; n <= layout.nodes; n++) {
        const hostname = unique(`p${p}r${r}n${n}`);
        const reg = await registerNode(agent, {
          hostname,
          pod: `pod-${p}`,
          rack: `rack-${p}${"abcdefgh"[r - 1]}`,
          capabilities: { containers: true, runtime: "docker test" },
          gpus: inventory(layout.gpus ?? 8, gpuType),
        });
        await recordHeartbeat(agent, reg.node.id, {});
        nodes.push({ id: reg.node.id, hostname, pod: `pod-${p}`, rack: `rack-${p}${"abcdefgh"[r - 1]}` });
      }
  return { cluster, gpuType, nodes, agent };
}

const book = (tenantId: string, gpuType: string, nodeCount: number, from: number, to: number, clusterId?: string) =>
  createReservation(asTenantAdmin(tenantId), {
    gpu_type: gpuType,
    node_count: nodeCount,
    starts_at: iso(from),
    ends_at: iso(to),
    ...(clusterId ? { cluster_id: clusterId } : {}),
  });

/**
 * Moves a reservation's window (and its holdings') as if time had passed, without the guards that
 * refuse growing a window over work (the work in these tests was placed when that was allowed).
 */
async function setWindow(reservationId: string, startsAt: string, endsAt: string, extra = "") {
  const c = await pool().connect();
  try {
    await c.query("BEGIN");
    await c.query("SET LOCAL session_replication_role = replica");
    await c.query(`UPDATE reservation_nodes SET starts_at = ${startsAt}, ends_at = ${endsAt} WHERE reservation_id = $1`, [reservationId]);
    await c.query(`UPDATE reservations SET starts_at = ${startsAt}, ends_at = ${endsAt}${extra} WHERE id = $1`, [reservationId]);
    await c.query("COMMIT");
  } finally {
    c.release();
  }
}

/** Live holdings of these nodes that overlap in time: must always be none. */
async function doubleBookings(nodeIds: string[]) {
  const { rows } = await pool().query(
    `SELECT a.node_id FROM reservation_nodes a JOIN reservation_nodes b ON a.node_id = b.node_id AND a.id < b.id
      WHERE a.live AND b.live AND a.node_id = ANY($1::uuid[]) AND a.starts_at < b.ends_at AND b.starts_at < a.ends_at`,
    [nodeIds],
  );
  return rows;
}

describe("booking", () => {
  it("confirms concrete nodes in one pod on the fewest racks, best fit, and shows them", async () => {
    const f = await rackedFleet({ pods: 2, racks: 2, nodes: 3 });
    const t = await makeTenant(200);
    const now = Date.now();
    const r = reservationJson(await book(t.id, f.gpuType, 3, now + HOUR, now + 2 * HOUR));
    expect(r).toMatchObject({
      status: "confirmed",
      node_count: 3,
      gpu_count: 24,
      degraded: false,
      topology: { clusters: 1, pods: 1, racks: 1, nodes: 3 },
    });
    // the next request of 4 needs two racks: one pod still can hold it, so it stays in one pod
    const r2 = reservationJson(await book(t.id, f.gpuType, 4, now + HOUR, now + 2 * HOUR));
    expect(r2.topology).toMatchObject({ pods: 1, racks: 2 });
    expect(new Set([...r.node_ids, ...r2.node_ids]).size).toBe(7);
    // an event and an audit entry for the booking
    const events = await db().reservationEvent.findMany({ where: { reservationId: r.id } });
    expect(events.map((e) => e.kind)).toEqual(["created"]);
    expect(await db().auditLog.count({ where: { action: "reservation.created", targetId: r.id } })).toBe(1);
    // the capacity view agrees: 12 − 7 whole nodes free in that window, all 12 free before it
    const during = await getCapacity({ gpu_type: f.gpuType, from: iso(now + HOUR), to: iso(now + 2 * HOUR) });
    expect(during).toMatchObject({ nodes: 12, free_nodes: 5, free_gpus: 40 });
    const before = await getCapacity({ gpu_type: f.gpuType, from: iso(now), to: iso(now + HOUR / 2) });
    expect(before.free_nodes).toBe(12);
  });

  it("refuses a window it cannot serve with 409 no_capacity saying what is free and when it would fit; 422 for what can never be served", async () => {
    const f = await rackedFleet({ pods: 1, racks: 1, nodes: 2 });
    const t = await makeTenant(200);
    const now = Date.now();
    await book(t.id, f.gpuType, 2, now + HOUR, now + 3 * HOUR);
    const refused = await book(t.id, f.gpuType, 1, now + 2 * HOUR, now + 4 * HOUR).catch((e) => e);
    expect(refused.code).toBe("no_capacity");
    expect(refused.details).toEqual([
      { path: "node_count", message: expect.stringContaining(`0 whole ${f.gpuType} node(s) are free`) },
      { path: "starts_at", message: expect.stringContaining(`${iso(now + 3 * HOUR)} to ${iso(now + 5 * HOUR)}`) },
    ]);
    expect(await codeOf(book(t.id, f.gpuType, 3, now + 5 * HOUR, now + 6 * HOUR))).toBe("unsatisfiable");
    expect(await codeOf(book(t.id, "NOSUCHTYPE", 1, now + HOUR, now + 2 * HOUR))).toBe("unsatisfiable");
    expect(await codeOf(book(t.id, f.gpuType, 1, now - HOUR, now + HOUR))).toBe("validation_failed");
    expect(await codeOf(book(t.id, f.gpuType, 1, now + HOUR, now + HOUR + 1000))).toBe("validation_failed");
  });

  it("50 parallel overlapping requests: only non-overlapping holdings, every refusal a clean 409", async () => {
    const f = await rackedFleet({ pods: 2, racks: 2, nodes: 3 });
    const tenants = await Promise.all(Array.from({ length: 10 }, () => makeTenant(400)));
    const now = Date.now();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => {
        const from = now + HOUR + (i % 5) * (HOUR / 2);
        return book(tenants[i % 10]!.id, f.gpuType, 1 + (i % 4), from, from + 2 * HOUR).then(
          (r) => ({ ok: true as const, r: reservationJson(r) }),
          (e: { code?: string; message?: string }) => ({ ok: false as const, code: e.code ?? `crash: ${e.message}` }),
        );
      }),
    );
    // 50 requests for 1–4 of 12 nodes in overlapping windows: many must be refused, each cleanly
    const refused = results.filter((x) => !x.ok);
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((x) => (x.ok ? "" : x.code)))).toEqual(new Set(["no_capacity"]));
    expect(HTTP_STATUS.no_capacity).toBe(409);
    const confirmed = results.flatMap((x) => (x.ok ? [x.r] : []));
    expect(confirmed.length).toBeGreaterThan(0);
    for (const r of confirmed) expect(r.node_ids).toHaveLength(r.node_count);
    expect(await doubleBookings(f.nodes.map((n) => n.id))).toEqual([]);
    // what was confirmed is exactly what the database holds
    expect(await db().reservationNode.count({ where: { nodeId: { in: f.nodes.map((n) => n.id) }, live: true } })).toBe(
      confirmed.reduce((s, r) => s + r.node_count, 0),
    );
  });

  it("the database refuses a second live holding of a node in an overlapping window, whatever writes it", async () => {
    const f = await rackedFleet({ pods: 1, racks: 1, nodes: 1 });
    const t = await makeTenant(64);
    const now = Date.now();
    const r = reservationJson(await book(t.id, f.gpuType, 1, now + HOUR, now + 2 * HOUR));
    const other = await db().reservation.create({
      data: {
        tenantId: t.id,
        gpuType: f.gpuType,
        nodeCount: 1,
        startsAt: new Date(now + HOUR * 1.5),
        endsAt: new Date(now + 3 * HOUR),
        createdBy: "test",
      },
    });
    const direct = await pool()
      .query(
        `INSERT INTO reservation_nodes (reservation_id, tenant_id, node_id, gpu_count, starts_at, ends_at) VALUES ($1, $2, $3, 8, $4, $5)`,
        [other.id, t.id, r.node_ids[0], new Date(now + HOUR * 1.5), new Date(now + 3 * HOUR)],
      )
      .catch((e: { code?: string }) => e.code);
    expect(direct).toBe("23P01");
  });
});

describe("quota, cancel, release, extend", () => {
  it("reserved GPUs count against the quota while active, and only then", async () => {
    const f = await rackedFleet({ pods: 1, racks: 1, nodes: 3, gpus: 4 });
    const t = await makeTenant(8);
    const now = Date.now();
    const future = reservationJson(await book(t.id, f.gpuType, 2, now + HOUR, now + 2 * HOUR));
    expect((await tenantFigures(t.id)).gpu_in_use).toBe(0);
    // overlapping it, nothing more fits the quota of 8; after it, it does
    expect(await codeOf(book(t.id, f.gpuType, 1, now + HOUR * 1.5, now + 3 * HOUR))).toBe("unsatisfiable");
    await book(t.id, f.gpuType, 1, now + 2 * HOUR, now + 3 * HOUR);
    const active = reservationJson(await book(t.id, f.gpuType, 1, now, now + HOUR / 2));
    expect((await tenantFigures(t.id)).gpu_in_use).toBe(4);
    // a job inside the reservation does not count twice; a job outside counts on top
    const inside = await submitJob(asTenantAdmin(t.id), {
      name: "inside",
      gpu_count: 4,
      gpu_type: f.gpuType,
      priority: 5,
      max_retries: 0,
      reservation_id: active.id,
    });
    await runSchedulerCycle("test");
    expect((await db().job.findUniqueOrThrow({ where: { id: inside.id } })).status).toBe("running");
    expect((await tenantFigures(t.id)).gpu_in_use).toBe(4);
    expect(future.status).toBe("confirmed");
  });

  it("a cycle that places reads the tenant's reservations when they matter: work naming none runs in its active one first, work naming a later one waits for it", async () => {
    // the placing cycle reads live reservations only when work names one or a reserved node has a
    // free GPU (lib/scheduler/cycle-facts.ts): each case here is one of those
    const f = await rackedFleet({ pods: 1, racks: 1, nodes: 2 });
    const t = await makeTenant(64);
    const now = Date.now();
    const active = reservationJson(await book(t.id, f.gpuType, 1, now, now + HOUR));
    const later = reservationJson(await book(t.id, f.gpuType, 1, now + 2 * HOUR, now + 3 * HOUR));
    const job = (name: string, extra: Record<string, unknown> = {}) =>
      submitJob(asTenantAdmin(t.id), { name, gpu_count: 2, gpu_type: f.gpuType, priority: 5, max_retries: 0, duration_s: 600, ...extra });
    const plain = await job("names-none");
    const waiting = await job("names-later", { reservation_id: later.id });
    await runSchedulerCycle("test", { scope: "placeable" });
    const placement = await db().jobPlacement.findFirstOrThrow({ where: { jobId: plain.id, endedAt: null } });
    expect(placement.reservationId).toBe(active.id);
    expect(placement.nodeIds).toEqual(active.node_ids);
    expect(await db().job.findUniqueOrThrow({ where: { id: waiting.id } })).toMatchObject({
      status: "queued",
      pendingReason: expect.stringContaining("Waiting for its reservation"),
    });
  });

  it("work inside a reservation still starts when on-demand work placed before it began fills the quota, and nobody else's cycle stalls", async () => {
    // the soak found this: a reservation that starts while on-demand work fills the quota puts the
    // tenant over it (by design: nothing is evicted); the database then refused every allocation of
    // the tenant, its work inside the reservation too, and each scheduling cycle failed as a whole
    const f = await rackedFleet({ pods: 1, racks: 1, nodes: 3 });
    const t = await makeTenant(8);
    const other = await makeTenant(64);
    const now = Date.now();
    const r = reservationJson(await book(t.id, f.gpuType, 1, now + HOUR, now + 2 * HOUR));
    const before = await submitJob(asTenantAdmin(t.id), {
      name: "on-demand",
      gpu_count: 8,
      gpu_type: f.gpuType,
      priority: 5,
      max_retries: 0,
    });
    await runSchedulerCycle("test");
    expect((await db().job.findUniqueOrThrow({ where: { id: before.id } })).status).toBe("running");
    await setWindow(r.id, "now() - interval '1 second'", "now() + interval '1 hour'", ", status = 'active'");
    expect((await tenantFigures(t.id)).gpu_in_use).toBe(16);
    const inside = await submitJob(asTenantAdmin(t.id), {
      name: "inside",
      gpu_count: 4,
      gpu_type: f.gpuType,
      priority: 5,
      max_retries: 0,
      reservation_id: r.id,
    });
    const outside = await submitJob(asTenantAdmin(t.id), {
      name: "outside",
      gpu_count: 5,
      gpu_type: f.gpuType,
      priority: 5,
      max_retries: 0,
      duration_s: 60,
    });
    const theirs = await submitJob(asTenantAdmin(other.id), {
      name: "theirs",
      gpu_count: 2,
      gpu_type: f.gpuType,
      priority: 5,
      max_retries: 0,
    });
    await runSchedulerCycle("test");
    const status = async (id: string) => (await db().job.findUniqueOrThrow({ where: { id }, select: { status: true } })).status;
    expect(await status(inside.id)).toBe("running");
    expect(await status(theirs.id)).toBe("running");
    // more than the reservation has left: on demand, where the tenant is over its quota until its earlier work ends
    expect(await status(outside.id)).toBe("blocked");
  });

  it("cancels before the start (nothing billed), releases early (billing and work stop now), extends when free", async () => {
    const f = await rackedFleet({ pods: 1, racks: 1, nodes: 2 });
    const t = await makeTenant(64);
    const b = await makeTenant(64);
    const now = Date.now();
    const later = reservationJson(await book(t.id, f.gpuType, 1, now + HOUR, now + 2 * HOUR));
    const cancelled = reservationJson(await endReservation(asTenantAdmin(t.id), later.id));
    expect(cancelled).toMatchObject({ status: "cancelled", node_ids: [] });
    expect(await db().usageEvent.count({ where: { reservationId: later.id } })).toBe(0);

    const active = reservationJson(await book(t.id, f.gpuType, 1, now, now + HOUR));
    // another tenant books the same node right after it: extending into that is refused, naming it
    const next = reservationJson(
      await book(b.id, f.gpuType, 2, now + HOUR, now + 2 * HOUR).catch(() => book(b.id, f.gpuType, 1, now + HOUR, now + 2 * HOUR)),
    );
    const blocked = next.node_ids.includes(active.node_ids[0]!);
    const extended = await extendReservation(asTenantAdmin(t.id), active.id, { ends_at: iso(now + 1.5 * HOUR) }).then(
      reservationJson,
      (e) => e,
    );
    if (blocked) {
      expect(extended).toMatchObject({
        code: "no_capacity",
        details: [{ path: "ends_at", message: expect.stringContaining(iso(now + HOUR)) }],
      });
    } else {
      expect(extended).toMatchObject({ ends_at: iso(now + 1.5 * HOUR) });
    }
    // a job inside, then an early release: the job stops, billing ends at the release
    const job = await submitJob(asTenantAdmin(t.id), {
      name: "inside",
      gpu_count: 8,
      gpu_type: f.gpuType,
      priority: 5,
      max_retries: 0,
      reservation_id: active.id,
    });
    await runSchedulerCycle("test");
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("running");
    const released = reservationJson(await endReservation(asTenantAdmin(t.id), active.id));
    expect(released.status).toBe("released");
    expect(Date.parse(released.ends_at)).toBeLessThanOrEqual(Date.now());
    const stopped = await db().job.findUniqueOrThrow({ where: { id: job.id } });
    expect(stopped).toMatchObject({ status: "cancelled" });
    const usage = await db().usageEvent.findMany({ where: { reservationId: active.id } });
    expect(usage).toHaveLength(1);
    expect(usage[0]!.endedAt.toISOString()).toBe(released.ends_at);
    // the job's own time was inside the reservation: recorded, not billed again
    const jobUsage = await db().usageEvent.findMany({ where: { jobId: job.id } });
    expect(jobUsage.every((u) => u.coveredByReservationId === active.id && u.amountCents === 0n)).toBe(true);
    expect(await codeOf(endReservation(asTenantAdmin(t.id), active.id))).toBe("invalid_transition");
    const kinds = (await db().reservationEvent.findMany({ where: { reservationId: active.id }, orderBy: { id: "asc" } })).map(
      (e) => e.kind,
    );
    expect(kinds).toEqual(blocked ? ["created", "released"] : ["created", "extended", "released"]);
    // another tenant's reservation is not found
    expect(await codeOf(endReservation(asTenantAdmin(b.id), released.id))).toBe("not_found");
  });
});

describe("the work around reservations", () => {
  it("parallel cycles never place another tenant's job on a reserved node; the database refuses it too", async () => {
    const f = await rackedFleet({ pods: 1, racks: 2, nodes: 3 });
    const owner = await makeTenant(400);
    const other = await makeTenant(400);
    const now = Date.now();
    // one reservation holds nodes before anything runs; more bookings then race the cycles
    const first = reservationJson(await book(owner.id, f.gpuType, 2, now, now + HOUR));
    const submit = (i: number) =>
      submitJob(asTenantAdmin(other.id), {
        name: `foreign-${i}`,
        gpu_count: [1, 2, 4, 8, 12][i % 5]!,
        gpu_type: f.gpuType,
        priority: 5,
        max_retries: 0,
        ...(i % 3 ? { duration_s: 600 + i } : {}),
      });
    await Promise.all(Array.from({ length: 12 }, (_, i) => submit(i)));
    await Promise.all([
      runSchedulerCycle("test-a"),
      book(owner.id, f.gpuType, 1, now, now + HOUR).catch(() => null),
      runSchedulerCycle("test-b"),
      book(owner.id, f.gpuType, 1, now + 5 * 60_000, now + HOUR).catch(() => null),
      submit(12).then(() => runSchedulerCycle("test-c")),
      book(owner.id, f.gpuType, 1, now + 10 * 60_000, now + HOUR).catch(() => null),
      runSchedulerCycle("test-d"),
    ]);
    await runSchedulerCycle("test-e");
    const { rows } = await pool().query(
      `SELECT j.id, rn.reservation_id FROM jobs j JOIN job_placements p ON p.job_id = j.id
         JOIN reservation_nodes rn ON rn.node_id = ANY(p.node_ids) AND rn.live
        WHERE j.tenant_id = $1 AND rn.starts_at < COALESCE(p.ended_at, 'infinity') AND rn.ends_at > p.started_at
          AND rn.starts_at < p.started_at + make_interval(secs => COALESCE(j.duration_s, 1e9))`,
      [other.id],
    );
    expect(rows).toEqual([]);
    // a direct allocation on a reserved node, bypassing the scheduler, is refused by the database
    expect(await db().job.count({ where: { tenantId: other.id, status: "running" } })).toBeGreaterThan(0);
    const held = await db().reservationNode.findFirstOrThrow({ where: { reservationId: first.id } });
    const job = await submitJob(asTenantAdmin(other.id), {
      name: "direct",
      gpu_count: 1,
      gpu_type: f.gpuType,
      priority: 5,
      max_retries: 0,
    });
    const c = await pool().connect();
    try {
      await c.query("BEGIN");
      await c.query(
        `UPDATE jobs SET status = 'running', started_at = now(), attempts = attempts + 1, fence = gen_random_uuid() WHERE id = $1`,
        [job.id],
      );
      const refused = await c
        .query(
          `UPDATE gpus SET allocated_job_id = $1 WHERE id = (SELECT id FROM gpus WHERE node_id = $2 AND allocated_job_id IS NULL AND allocated_replica_id IS NULL LIMIT 1)`,
          [job.id, held.nodeId],
        )
        .catch((e: { message: string }) => e.message);
      expect(refused).toMatch(/another tenant's reservation/);
    } finally {
      await c.query("ROLLBACK");
      c.release();
    }
  });

  it("backfills a future reservation's nodes only with work that ends before it starts; work naming it waits for it", async () => {
    const f = await rackedFleet({ pods: 1, racks: 1, nodes: 1 });
    const owner = await makeTenant(64);
    const other = await makeTenant(64);
    const now = Date.now();
    const r = reservationJson(await book(owner.id, f.gpuType, 1, now + HOUR, now + 2 * HOUR));
    const long = await submitJob(asTenantAdmin(other.id), {
      name: "long",
      gpu_count: 4,
      gpu_type: f.gpuType,
      priority: 1,
      max_retries: 0,
      duration_s: 2 * 3600,
    });
    const endless = await submitJob(asTenantAdmin(other.id), {
      name: "endless",
      gpu_count: 2,
      gpu_type: f.gpuType,
      priority: 1,
      max_retries: 0,
    });
    const short = await submitJob(asTenantAdmin(other.id), {
      name: "short",
      gpu_count: 2,
      gpu_type: f.gpuType,
      priority: 5,
      max_retries: 0,
      duration_s: 1800,
    });
    const named = await submitJob(asTenantAdmin(owner.id), {
      name: "named",
      gpu_count: 2,
      gpu_type: f.gpuType,
      priority: 1,
      max_retries: 0,
      reservation_id: r.id,
    });
    await runSchedulerCycle("test");
    const status = async (id: string) => db().job.findUniqueOrThrow({ where: { id }, select: { status: true, pendingReason: true } });
    expect((await status(short.id)).status).toBe("running");
    expect((await status(long.id)).status).toBe("queued");
    expect((await status(endless.id)).status).toBe("queued");
    expect(await status(named.id)).toMatchObject({ status: "queued", pendingReason: expect.stringContaining("to start at") });
    // another tenant naming this reservation is refused at submit
    expect(
      await codeOf(
        submitJob(asTenantAdmin(other.id), {
          name: "x",
          gpu_count: 1,
          gpu_type: f.gpuType,
          priority: 5,
          max_retries: 0,
          reservation_id: r.id,
        }),
      ),
    ).toBe("validation_failed");
  });

  it("at its start, work that overran onto its nodes moves off; at its end, the work inside stops", async () => {
    const f = await rackedFleet({ pods: 1, racks: 1, nodes: 1 });
    const owner = await makeTenant(64);
    const other = await makeTenant(64);
    const now = Date.now();
    const early = await submitJob(asTenantAdmin(other.id), {
      name: "overrun",
      gpu_count: 2,
      gpu_type: f.gpuType,
      priority: 1,
      max_retries: 0,
      duration_s: 600,
    });
    await runSchedulerCycle("test");
    const r = reservationJson(await book(owner.id, f.gpuType, 1, now + 20 * 60_000, now + HOUR));
    // twenty minutes pass: the job declared ten and still runs when the reservation starts
    await setWindow(r.id, "now() - interval '1 second'", "ends_at");
    await maintainReservations();
    expect(await db().job.findUniqueOrThrow({ where: { id: early.id }, select: { status: true, failures: true } })).toEqual({
      status: "queued",
      failures: 0,
    });
    expect((await db().reservation.findUniqueOrThrow({ where: { id: r.id } })).status).toBe("active");
    const inside = await submitJob(asTenantAdmin(owner.id), {
      name: "unnamed-inside",
      gpu_count: 8,
      gpu_type: f.gpuType,
      priority: 1,
      max_retries: 0,
    });
    await runSchedulerCycle("test");
    expect((await db().jobPlacement.findFirstOrThrow({ where: { jobId: inside.id } })).reservationId).toBe(r.id);
    // its end comes: the unnamed job goes back to the queue, retries untouched; holdings close and bill
    await setWindow(r.id, "starts_at", "now()");
    await maintainReservations();
    expect((await db().reservation.findUniqueOrThrow({ where: { id: r.id } })).status).toBe("completed");
    expect(await db().job.findUniqueOrThrow({ where: { id: inside.id }, select: { status: true, failures: true } })).toEqual({
      status: "queued",
      failures: 0,
    });
    expect(await db().usageEvent.count({ where: { reservationId: r.id, kind: "final" } })).toBe(1);
  });
});

describe("repairs", () => {
  it("a quarantined reserved node marks the reservation degraded and a free node of the same pod replaces it, with an alert either way", async () => {
    const f = await rackedFleet({ pods: 2, racks: 1, nodes: 3 });
    const t = await makeTenant(200);
    const now = Date.now();
    const r = reservationJson(await book(t.id, f.gpuType, 2, now, now + HOUR));
    const pod = f.nodes.find((n) => n.id === r.node_ids[0])!.pod;
    await changeNodeStatus(actorFor(operatorPrincipal), r.node_ids[0]!, "quarantined", "test fault");
    await maintainReservations();
    const after = reservationJson(await getReservationOrThrow(operatorPrincipal, r.id));
    expect(after.degraded).toBe(false);
    expect(after.node_ids).toHaveLength(2);
    expect(after.node_ids).not.toContain(r.node_ids[0]);
    const replacement = after.node_ids.find((id) => !r.node_ids.includes(id))!;
    expect(f.nodes.find((n) => n.id === replacement)!.pod).toBe(pod);
    expect(after.nodes.find((n) => n.node_id === r.node_ids[0])!.state).toBe("cut");
    const kinds = (await db().reservationEvent.findMany({ where: { reservationId: r.id }, orderBy: { id: "asc" } })).map((e) => e.kind);
    expect(kinds).toEqual(["created", "started", "degraded", "node_replaced", "restored"]);
    const alert = await db().alertEvent.findFirstOrThrow({ where: { dedupeKey: `reservation_degraded:${r.id}` } });
    expect(alert).toMatchObject({ tenantId: t.id, status: "resolved" });
    expect(alert.message).toMatch(/replaced/);
  });

  it("with no free node it stays degraded (the tenant is alerted, the lost node not billed) until one is free", async () => {
    const f = await rackedFleet({ pods: 1, racks: 1, nodes: 2 });
    const t = await makeTenant(200);
    const b = await makeTenant(200);
    const now = Date.now();
    const r = reservationJson(await book(t.id, f.gpuType, 1, now, now + HOUR));
    const blocker = reservationJson(await book(b.id, f.gpuType, 1, now, now + HOUR));
    await changeNodeStatus(actorFor(operatorPrincipal), r.node_ids[0]!, "quarantined", "test fault");
    await maintainReservations();
    const degraded = await db().reservation.findUniqueOrThrow({ where: { id: r.id } });
    expect(degraded.degradedAt).not.toBeNull();
    expect(await db().alertEvent.findFirstOrThrow({ where: { dedupeKey: `reservation_degraded:${r.id}` } })).toMatchObject({
      status: "firing",
      tenantId: t.id,
    });
    const cut = await db().reservationNode.findFirstOrThrow({ where: { reservationId: r.id } });
    expect(cut.closedAt).not.toBeNull();
    expect(await db().usageEvent.count({ where: { reservationNodeId: cut.id, kind: "final" } })).toBe(1);
    // the other tenant releases its node: it is handed over (wiped and attested) first, and only
    // then does the next pass swap it in
    await attestedCluster(f.cluster.id);
    await endReservation(asTenantAdmin(b.id), blocker.id);
    await maintainReservations();
    expect((await db().reservation.findUniqueOrThrow({ where: { id: r.id } })).degradedAt).not.toBeNull();
    const gpus = await db().gpu.findMany({ where: { nodeId: blocker.node_ids[0]! }, select: { uuid: true } });
    expect(
      await driveHandover(
        new FakeNodeAgent(
          f.cluster.id,
          blocker.node_ids[0]!,
          gpus.map((g) => g.uuid),
        ),
      ),
    ).toBe("available");
    await maintainReservations();
    const whole = await db().reservation.findUniqueOrThrow({ where: { id: r.id } });
    expect(whole.degradedAt).toBeNull();
    expect(
      await db().reservationNode.count({ where: { reservationId: r.id, nodeId: blocker.node_ids[0]!, live: true, closedAt: null } }),
    ).toBe(1);
  });
});

describe("billing", () => {
  it("bills a reservation per second for its whole window, used or not, each second of each node exactly once", async () => {
    const f = await rackedFleet({ pods: 1, racks: 1, nodes: 2, gpus: 4 });
    const t = await makeTenant(64);
    const now = Date.now();
    await db().gpuRate.create({
      data: { gpuType: f.gpuType, centsPerHour: 360, effectiveFrom: new Date(now - 30 * 86_400_000), createdBy: "test" },
    });
    const r = reservationJson(await book(t.id, f.gpuType, 2, now, now + HOUR));
    // move its window into the past hour, then bill the way the meter and the sweep do: accruals, then the end
    const start = new Date(Math.floor((now - 2 * HOUR) / 1000) * 1000);
    const end = new Date(start.getTime() + HOUR);
    await setWindow(r.id, `'${start.toISOString()}'`, `'${end.toISOString()}'`, ", status = 'active'");
    for (const minutes of [7, 7, 23, 41])
      await accrueRunningUsage({
        tenantId: t.id,
        until: new Date(start.getTime() + minutes * 60_000 + 123),
        invoiceEveryS: 0,
        prepaidEveryS: 0,
      });
    await maintainReservations();
    await accrueRunningUsage({ tenantId: t.id, invoiceEveryS: 0, prepaidEveryS: 0 });
    const holdings = await db().reservationNode.findMany({ where: { reservationId: r.id } });
    for (const h of holdings) {
      const segs = await db().usageEvent.findMany({ where: { reservationNodeId: h.id }, orderBy: { startedAt: "asc" } });
      expect(segs[0]!.startedAt.toISOString()).toBe(start.toISOString());
      expect(segs.at(-1)!.endedAt.toISOString()).toBe(end.toISOString());
      for (let i = 1; i < segs.length; i++) expect(segs[i]!.startedAt.getTime()).toBe(segs[i - 1]!.endedAt.getTime());
      expect(segs.filter((s) => s.kind === "final")).toHaveLength(1);
      expect(segs.reduce((s, x) => s + Number(x.gpuSeconds), 0)).toBe(3600 * 4);
    }
    // 2 nodes × 4 GPUs × 1 hour at 360 ¢/GPU-hour, on one invoice line
    const inv = await generateInvoice(systemActor, t.id, { period_start: iso(start.getTime() - 1000), period_end: iso(Date.now()) });
    expect(Number(inv.amountCents)).toBe(2880);
    expect(inv.lines).toEqual([expect.objectContaining({ reservationId: r.id, gpuSeconds: 28_800n, amountCents: 2880n })]);
    // a second "segment" over billed time is refused by the database
    const h = holdings[0]!;
    const again = await pool()
      .query(
        `INSERT INTO usage_events (tenant_id, reservation_node_id, reservation_id, attempt, kind, settlement, gpu_type, gpu_count, started_at, ended_at, gpu_seconds, cents_per_hour, amount_cents)
              VALUES ($1, $2, $3, 1, 'accrual', 'invoice', $4, 4, $5, $6, 40, 360, 4)`,
        [t.id, h.id, r.id, f.gpuType, new Date(start.getTime() + 60_000), new Date(start.getTime() + 70_000)],
      )
      .catch((e: { code?: string }) => e.code);
    expect(again).toBe("23P01");
  });
});

describe("the database keeps each placement to the reservation that holds its nodes", () => {
  it("refuses a placement that names another reservation than its nodes', none when they are held, or mixes held nodes with others; one bad row refuses the whole statement", async () => {
    const f = await rackedFleet({ pods: 1, racks: 1, nodes: 3 });
    const t = await makeTenant(64);
    const other = await makeTenant(64);
    const now = Date.now();
    const mine = reservationJson(await book(t.id, f.gpuType, 1, now, now + HOUR));
    const theirs = reservationJson(await book(other.id, f.gpuType, 1, now, now + HOUR));
    const held = mine.node_ids[0]!;
    const free = f.nodes.map((n) => n.id).find((id) => id !== held && id !== theirs.node_ids[0])!;
    // waiting jobs no cycle may start (other files' cycles share this database)
    const job = async (tenantId: string) =>
      (
        await db().job.create({
          data: {
            tenantId,
            name: unique("pin"),
            gpuCount: 1,
            gpuType: f.gpuType,
            priority: 5,
            status: "queued",
            notBefore: new Date(now + 86_400_000),
          },
        })
      ).id;
    const [a, b] = [await job(t.id), await job(t.id)];
    const c = await pool().connect();
    const insert = async (rows: Array<{ job: string; nodes: string[]; reservation: string | null }>) => {
      await c.query("SAVEPOINT p");
      try {
        await c.query(
          `INSERT INTO job_placements (job_id, attempt, fence, gpu_ids, node_ids, started_at, reservation_id)
           SELECT x.job, 1, gen_random_uuid(), ARRAY[gen_random_uuid()], string_to_array(x.nodes, ',')::uuid[], now(), x.reservation
             FROM unnest($1::uuid[], $2::text[], $3::uuid[]) AS x(job, nodes, reservation)`,
          [rows.map((r) => r.job), rows.map((r) => r.nodes.join(",")), rows.map((r) => r.reservation)],
        );
        await c.query("ROLLBACK TO SAVEPOINT p");
        return "ok";
      } catch (e) {
        await c.query("ROLLBACK TO SAVEPOINT p");
        const err = e as { code?: string; message: string };
        return `${err.code}: ${err.message}`;
      }
    };
    try {
      await c.query("BEGIN");
      expect(await insert([{ job: a, nodes: [held], reservation: mine.id }])).toBe("ok");
      expect(await insert([{ job: a, nodes: [free], reservation: null }])).toBe("ok");
      // the tenant's work on its own reserved node runs inside that reservation
      expect(await insert([{ job: a, nodes: [held], reservation: null }])).toBe(
        `23514: placement of job ${a} names reservation <NULL>, but its nodes are held by ${mine.id}`,
      );
      expect(await insert([{ job: a, nodes: [free], reservation: mine.id }])).toBe(
        `23514: placement of job ${a} names reservation ${mine.id}, but its nodes are held by <NULL>`,
      );
      // another tenant's reservation covers nothing of this tenant's
      expect(await insert([{ job: a, nodes: [theirs.node_ids[0]!], reservation: theirs.id }])).toMatch(
        /^23514: placement of job .* names reservation .*, but its nodes are held by <NULL>$/,
      );
      expect(await insert([{ job: a, nodes: [held, free], reservation: mine.id }])).toBe(
        "23514: a placement may not mix nodes of a reservation with other nodes",
      );
      // many rows in one statement, as a cycle writes them: one bad row refuses them all
      expect(
        await insert([
          { job: a, nodes: [held], reservation: mine.id },
          { job: b, nodes: [free], reservation: mine.id },
        ]),
      ).toMatch(/^23514: placement of job .* names reservation/);
      expect(
        await insert([
          { job: a, nodes: [held], reservation: mine.id },
          { job: b, nodes: [free], reservation: null },
        ]),
      ).toBe("ok");
      await c.query("ROLLBACK");
      expect(await db().jobPlacement.count({ where: { jobId: { in: [a, b] } } })).toBe(0);
    } finally {
      c.release();
    }
  });
});
