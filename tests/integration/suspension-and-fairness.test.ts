import { afterAll, describe, expect, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { getEndpointOrThrow } from "@/lib/endpoints/get-endpoint";
import { reconcileEndpoints } from "@/lib/endpoints/reconcile-endpoints";
import { createPipeline } from "@/lib/pipelines/create-pipeline";
import { createReservation } from "@/lib/reservations/create-reservation";
import { submitJob } from "@/lib/jobs/submit-job";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { enforceSuspensions } from "@/lib/tenants/enforce-suspensions";
import { updateTenant } from "@/lib/tenants/update-tenant";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { actorFor, availableFleet, makeTenant, operatorPrincipal, tenantAdminPrincipal, unique } from "../support/fixtures";
import { codeAndFieldOf } from "../support/outcomes";

// This file's own limits (each test file has its own module instances, so its own env()):
// a small waiting cap and the smallest per-tenant window, restored for the files that follow.
const saved = { cap: process.env.MAX_WAITING_JOBS_PER_TENANT, window: process.env.SCHEDULER_TENANT_WINDOW };
process.env.MAX_WAITING_JOBS_PER_TENANT = "5";
process.env.SCHEDULER_TENANT_WINDOW = "10";
afterAll(() => {
  for (const [k, v] of [
    ["MAX_WAITING_JOBS_PER_TENANT", saved.cap],
    ["SCHEDULER_TENANT_WINDOW", saved.window],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const job = (gpuType: string, o: Record<string, unknown> = {}) => ({
  name: unique("j"),
  gpu_count: 2,
  gpu_type: gpuType,
  priority: 5,
  max_retries: 0,
  ...o,
});

async function finals(jobId: string) {
  return db().usageEvent.count({ where: { jobId, kind: "final" } });
}

describe("suspension stops work", () => {
  it("cancels running jobs (final segment billed once), blocks waiting ones, stops replicas, and reverses on reactivation", async () => {
    const { gpuType } = await availableFleet(2, 4, "S");
    const t = await makeTenant(16);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const running = await submitJob(asT, job(gpuType));
    await runSchedulerCycle("test");
    expect((await db().job.findUniqueOrThrow({ where: { id: running.id } })).status).toBe("running");
    const endpoint = await createEndpoint(asT, {
      name: unique("ep"),
      model: "m",
      gpu_type: gpuType,
      gpus_per_replica: 1,
      replicas: 1,
      autoscale_metric: "none",
      cooldown_s: 300,
    });
    const replica = endpoint.replicas.find((r) => r.status !== "stopped")!;
    expect(replica).toBeTruthy();
    // 6 GPUs while 3 of the 8 are held: it waits, whoever runs a scheduling cycle meanwhile (another
    // file's, say). Submitted before the replica took its GPU, such a cycle could place it on the 6 free.
    const waiting = await submitJob(asT, job(gpuType, { gpu_count: 6, cluster_id: undefined, priority: 9 }));

    await updateTenant(systemActor, t.id, { status: "suspended" });

    const r = await db().job.findUniqueOrThrow({ where: { id: running.id } });
    expect(r).toMatchObject({ status: "cancelled", error: "Stopped: the organisation was suspended" });
    expect(await db().gpu.count({ where: { allocatedJobId: running.id } })).toBe(0);
    expect(await finals(running.id)).toBe(1);
    expect(await db().job.findUniqueOrThrow({ where: { id: waiting.id } })).toMatchObject({ status: "blocked", blockReason: "suspended" });
    expect(await db().endpointReplica.findUniqueOrThrow({ where: { id: replica.id } })).toMatchObject({
      status: "stopped",
      stopReason: "tenant suspended",
    });
    expect(await db().usageEvent.count({ where: { replicaId: replica.id, kind: "final" } })).toBe(1);

    // nothing of theirs starts: not through the scheduler, the reconciler, or by hand in the database
    await runSchedulerCycle("test");
    await reconcileEndpoints({ endpointId: endpoint.id });
    expect(await db().job.findUniqueOrThrow({ where: { id: waiting.id } })).toMatchObject({ status: "blocked" });
    expect(await db().endpointReplica.count({ where: { endpointId: endpoint.id, status: { not: "stopped" } } })).toBe(0);
    await expect(
      db()
        .$executeRaw`UPDATE jobs SET status = 'running', started_at = now(), fence = gen_random_uuid(), block_reason = NULL WHERE id = ${waiting.id}::uuid`,
    ).rejects.toThrow(/suspended/);
    expect(await codeAndFieldOf(submitJob(asT, job(gpuType)))).toBe("forbidden");

    await updateTenant(systemActor, t.id, { status: "active" });
    expect(await db().job.findUniqueOrThrow({ where: { id: waiting.id } })).toMatchObject({ status: "queued", blockReason: null });
    await runSchedulerCycle("test");
    await reconcileEndpoints({ endpointId: endpoint.id });
    expect((await db().job.findUniqueOrThrow({ where: { id: waiting.id } })).status).toBe("running");
    expect((await getEndpointOrThrow(asT.principal, endpoint.id)).replicas.filter((x) => x.status !== "stopped")).toHaveLength(1);
    expect(await finals(running.id)).toBe(1);
    const actions = (await db().auditLog.findMany({ where: { targetId: t.id }, orderBy: { id: "asc" } })).map((a) => a.action);
    expect(actions.slice(-2)).toEqual(["tenant.suspended", "tenant.reactivated"]);
  });

  it("ends the tenant's reservations: one not started is cancelled, a running one released, and reactivation gives none back", async () => {
    const { gpuType } = await availableFleet(2, 4, "SR");
    const t = await makeTenant(16);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const now = Date.now();
    const at = (ms: number) => new Date(ms).toISOString();
    const running = await createReservation(asT, { gpu_type: gpuType, node_count: 1, starts_at: at(now), ends_at: at(now + 3_600_000) });
    const later = await createReservation(asT, {
      gpu_type: gpuType,
      node_count: 1,
      starts_at: at(now + 2 * 3_600_000),
      ends_at: at(now + 3 * 3_600_000),
    });
    await updateTenant(systemActor, t.id, { status: "suspended" });
    const [r, l] = await Promise.all([running, later].map((x) => db().reservation.findUniqueOrThrow({ where: { id: x.id } })));
    expect(r).toMatchObject({ status: "released", endReason: "the organisation was suspended" });
    expect(r!.endsAt.getTime()).toBeLessThanOrEqual(Date.now());
    expect(l).toMatchObject({ status: "cancelled", endReason: "the organisation was suspended" });
    // the nodes are no longer held: nothing of the tenant's is live in the reservation book
    expect(await db().reservationNode.count({ where: { reservationId: { in: [running.id, later.id] }, live: true, closedAt: null } })).toBe(
      0,
    );
    const events = await db().reservationEvent.findMany({
      where: { reservationId: { in: [running.id, later.id] } },
      select: { kind: true },
    });
    expect(events.map((e) => e.kind).sort()).toEqual(["cancelled", "created", "created", "released"].sort());
    await updateTenant(systemActor, t.id, { status: "active" });
    expect((await db().reservation.findUniqueOrThrow({ where: { id: later.id } })).status).toBe("cancelled");
  });

  it("racing parallel scheduling cycles, suspension leaves nothing of the tenant running and bills each run once", async () => {
    const { gpuType } = await availableFleet(4, 4, "R");
    const t = await makeTenant(16);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const jobs = [];
    for (let i = 0; i < 5; i++) jobs.push(await submitJob(asT, job(gpuType, { gpu_count: 1 })));
    await runSchedulerCycle("test");
    for (let i = 0; i < 5; i++) jobs.push(await submitJob(asT, job(gpuType, { gpu_count: 1 })));
    await Promise.all([
      runSchedulerCycle("race"),
      runSchedulerCycle("race"),
      updateTenant(systemActor, t.id, { status: "suspended" }),
      runSchedulerCycle("race"),
      enforceSuspensions(),
      runSchedulerCycle("race"),
    ]);
    await runSchedulerCycle("after");
    const rows = await db().job.findMany({ where: { tenantId: t.id } });
    expect(rows.filter((j) => j.status === "running")).toEqual([]);
    expect(rows.every((j) => j.status === "cancelled" || (j.status === "blocked" && j.blockReason === "suspended"))).toBe(true);
    expect(await db().gpu.count({ where: { allocatedJob: { tenantId: t.id } } })).toBe(0);
    for (const j of rows.filter((x) => x.status === "cancelled")) expect(await finals(j.id)).toBe(1);
  });

  it("a tenant suspended by hand in the database is caught by the sweep", async () => {
    const { gpuType } = await availableFleet(1, 4, "W");
    const t = await makeTenant(8);
    const j = await submitJob(actorFor(tenantAdminPrincipal(t.id)), job(gpuType));
    await runSchedulerCycle("test");
    await db().$executeRaw`UPDATE tenants SET status = 'suspended' WHERE id = ${t.id}::uuid`;
    await enforceSuspensions();
    expect(await db().job.findUniqueOrThrow({ where: { id: j.id } })).toMatchObject({ status: "cancelled" });
    expect(await finals(j.id)).toBe(1);
  });

  it("the database refuses a statement that starts any job of a suspended tenant, and lets its running work be written until the sweep ends it", async () => {
    const { gpuType } = await availableFleet(1, 4, "X");
    const active = await makeTenant(8);
    const suspended = await makeTenant(8);
    const runs = await submitJob(actorFor(tenantAdminPrincipal(suspended.id)), job(gpuType));
    await runSchedulerCycle("test");
    expect((await db().job.findUniqueOrThrow({ where: { id: runs.id } })).status).toBe("running");
    const mine = await submitJob(actorFor(tenantAdminPrincipal(active.id)), job(gpuType, { gpu_count: 4 }));
    const theirs = await submitJob(actorFor(tenantAdminPrincipal(suspended.id)), job(gpuType, { gpu_count: 4 }));
    // suspended in the database, before the sweep has ended anything
    await db().$executeRaw`UPDATE tenants SET status = 'suspended' WHERE id = ${suspended.id}::uuid`;

    // one statement starting both is refused whole: the active tenant's job stays queued too
    await expect(
      db().$executeRaw`UPDATE jobs SET status = 'running', started_at = now(), fence = gen_random_uuid()
                        WHERE id IN (${mine.id}::uuid, ${theirs.id}::uuid)`,
    ).rejects.toThrow(new RegExp(`tenant ${suspended.id} is suspended`));
    for (const id of [mine.id, theirs.id]) expect((await db().job.findUniqueOrThrow({ where: { id } })).status).toBe("queued");
    // what does not start a job is not refused: its running job's row and its waiting job's reason
    await db()
      .$executeRaw`UPDATE jobs SET updated_at = now(), pending_reason = 'waiting' WHERE id IN (${runs.id}::uuid, ${theirs.id}::uuid)`;
    expect((await db().job.findUniqueOrThrow({ where: { id: theirs.id } })).pendingReason).toBe("waiting");
    await enforceSuspensions();
    expect(await db().job.findUniqueOrThrow({ where: { id: runs.id } })).toMatchObject({ status: "cancelled" });
  });
});

describe("fairness between tenants", () => {
  it("caps the jobs one tenant may have waiting (429), pipelines included", async () => {
    const { gpuType, nodes } = await availableFleet(1, 2, "C");
    // the node takes no work, so no other file's scheduling cycle starts one of these jobs mid-test
    await changeNodeStatus(actorFor(operatorPrincipal), nodes[0]!.node.id, "maintenance");
    const t = await makeTenant(2);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    for (let i = 0; i < 5; i++) await submitJob(asT, job(gpuType));
    const sixth = await submitJob(asT, job(gpuType)).catch((e) => e);
    expect(sixth).toMatchObject({ code: "rate_limited", message: expect.stringContaining("5 jobs waiting") });
    expect(
      await codeAndFieldOf(
        createPipeline(asT, {
          name: unique("p"),
          steps: [{ name: "a", gpu_count: 1, gpu_type: gpuType, priority: 5, max_retries: 0, repeat: 1 }],
        }),
      ),
    ).toBe("rate_limited");
    expect(await db().job.count({ where: { tenantId: t.id } })).toBe(5);
  });

  it("operators cap a tenant's best priority: submissions above it are refused, its waiting jobs move down, the database agrees", async () => {
    const { gpuType, nodes } = await availableFleet(1, 2, "P");
    // the node takes no work, so no other file's scheduling cycle starts one of these jobs mid-test
    await changeNodeStatus(actorFor(operatorPrincipal), nodes[0]!.node.id, "maintenance");
    const t = await makeTenant(0 + 2);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const early = await submitJob(asT, job(gpuType, { priority: 1, gpu_count: 2 }));
    const blockedEarly = await submitJob(asT, job(gpuType, { priority: 1, gpu_count: 2 }));
    await updateTenant(systemActor, t.id, { max_priority: 4 });
    expect(await codeAndFieldOf(submitJob(asT, job(gpuType, { priority: 2 })))).toBe("validation_failed:priority");
    expect(await codeAndFieldOf(submitJob(asT, job(gpuType, { priority: 4 })))).toBe("ok");
    const moved = await db().job.findMany({ where: { id: { in: [early.id, blockedEarly.id] } } });
    expect(moved.map((j) => j.priority)).toEqual([4, 4]);
    await expect(db().$executeRaw`UPDATE jobs SET priority = 1 WHERE id = ${early.id}::uuid`).rejects.toThrow(/highest allowed priority/);
  });

  it("one tenant's backlog of 50,000 blocked jobs at priority 1 does not hide another tenant's job", async () => {
    const { gpuType } = await availableFleet(1, 2, "F");
    const hog = await makeTenant(0);
    const other = await makeTenant(2);
    // the backlog, as old clients could build it: every job over quota, at the best priority, oldest first
    await db().$executeRaw`
      INSERT INTO jobs (tenant_id, name, gpu_count, gpu_type, priority, status, block_reason, pending_reason, submitted_at)
      SELECT ${hog.id}::uuid, 'backlog-' || g, 1, ${gpuType}, 1, 'blocked', 'quota', 'over quota', now() - interval '1 hour' + g * interval '1 ms'
        FROM generate_series(1, 50001) g`;
    try {
      const theirs = await submitJob(actorFor(tenantAdminPrincipal(other.id)), job(gpuType, { priority: 10 }));
      const cycle = await runSchedulerCycle("fairness");
      expect((await db().job.findUniqueOrThrow({ where: { id: theirs.id } })).status).toBe("running");
      // the cycle read a window of the backlog, not all of it
      expect(cycle.considered).toBeLessThan(50_001);
    } finally {
      await db().$executeRaw`DELETE FROM jobs WHERE tenant_id = ${hog.id}::uuid`;
    }
    // 100,000 rows written with their triggers, beside the other files and, in `npm test`, the build:
    // 4 s alone, past the 60 s default twice on a loaded machine
  }, 180_000);
});
