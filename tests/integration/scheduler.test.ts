import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { db, pool } from "@/lib/db/client";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { finishJob } from "@/lib/jobs/finish-job";
import { getJobOrThrow, listJobs } from "@/lib/jobs/queries";
import { submitJob } from "@/lib/jobs/submit-job";
import { systemActor } from "@/lib/auth/principal";
import { updateTenant } from "@/lib/tenants/update-tenant";
import { lockForTransaction } from "@/lib/db/locks";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { registerNode } from "@/lib/fleet/register-node";
import {
  actorFor,
  agentPrincipal,
  availableFleet,
  inventory,
  makeCluster,
  makeTenant,
  operatorPrincipal,
  placementOf,
  sweepUntilOffline,
  tenantAdminPrincipal,
  unique,
} from "../support/fixtures";
import { codeOf } from "../support/outcomes";

const operator = actorFor(operatorPrincipal);

const fleet = (nodes: number, gpusPerNode = 8) => availableFleet(nodes, gpusPerNode, "T");

async function heldBy(jobId: string) {
  return db().gpu.count({ where: { allocatedJobId: jobId } });
}

describe("submitting", () => {
  it("queues within quota, blocks over quota, refuses what can never run (422 naming gpu_count)", async () => {
    const { gpuType } = await fleet(1);
    const t = await makeTenant(8);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const a = await submitJob(asT, { name: "a", gpu_count: 6, gpu_type: gpuType, priority: 5, max_retries: 0 });
    expect(a.status).toBe("queued");
    await runSchedulerCycle("test");
    const b = await submitJob(asT, { name: "b", gpu_count: 4, gpu_type: gpuType, priority: 5, max_retries: 0 });
    expect(b).toMatchObject({ status: "blocked", blockReason: "quota" });
    const tooBig = await submitJob(asT, { name: "c", gpu_count: 9, gpu_type: gpuType, priority: 5, max_retries: 0 }).catch((e) => e);
    expect(tooBig).toMatchObject({ code: "unsatisfiable", details: [{ path: "gpu_count" }] });
    const t2 = await makeTenant(64);
    const noSuchCapacity = await submitJob(actorFor(tenantAdminPrincipal(t2.id)), {
      name: "d",
      gpu_count: 16,
      gpu_type: gpuType,
      priority: 5,
      max_retries: 0,
    }).catch((e) => e);
    expect(noSuchCapacity.code).toBe("unsatisfiable");
    expect(await db().job.count({ where: { tenantId: t2.id } })).toBe(0);
  });

  it("returns a quota-blocked job to the queue by itself when quota frees, and runs it", async () => {
    const { gpuType } = await fleet(1);
    const t = await makeTenant(8);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const a = await submitJob(asT, { name: "a", gpu_count: 8, gpu_type: gpuType, priority: 5, max_retries: 0 });
    await runSchedulerCycle("test");
    const b = await submitJob(asT, { name: "b", gpu_count: 4, gpu_type: gpuType, priority: 5, max_retries: 0 });
    await runSchedulerCycle("test");
    expect((await getJobOrThrow(operatorPrincipal, b.id)).status).toBe("blocked");
    await finishJob(operator, a.id, { status: "completed", exit_code: 0 });
    await runSchedulerCycle("test");
    const after = await getJobOrThrow(operatorPrincipal, b.id);
    expect(after.status).toBe("running");
    const events = await db().jobEvent.findMany({ where: { jobId: b.id }, orderBy: { id: "asc" } });
    // straight to running when this cycle is the first to see the quota free; another file's cycle on the
    // shared database may see it first with the GPUs not yet free, and return the job to the queue
    const queued = events.filter((e) => e.toStatus === "queued");
    expect(events.filter((e) => e.toStatus !== "queued").map((e) => e.toStatus)).toEqual(["blocked", "running"]);
    expect(queued.map((e) => [e.fromStatus, e.reason])).toEqual(queued.map(() => ["blocked", "quota freed"]));
  });
});

describe("scheduling cycles", () => {
  it("places a gang whole, records the cycle, and tells the node through its heartbeat", async () => {
    const { gpuType, nodes, cluster } = await fleet(2);
    const t = await makeTenant(64);
    // priority 1: first in any cycle's logged decisions, whatever else the shared database holds
    const job = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
      name: "big",
      gpu_count: 12,
      gpu_type: gpuType,
      priority: 1,
      max_retries: 0,
      duration_s: 60,
    });
    await runSchedulerCycle("test");
    const running = await getJobOrThrow(operatorPrincipal, job.id);
    expect(running.status).toBe("running");
    expect(running.gpus).toHaveLength(12);
    expect(new Set(running.gpus.map((g) => g.nodeId)).size).toBe(2);
    // Test files share one database, so another file's cycle may have placed this job before ours
    // ran: whichever cycle did must have logged the placement, whole.
    const logs = await db().$queryRaw<Array<{ placed: number; considered: number }>>`
      SELECT placed, considered FROM scheduler_logs
       WHERE decisions @> ${JSON.stringify([{ job_id: job.id, outcome: "placed", gpus: 12, nodes: 2 }])}::jsonb`;
    expect(logs).toHaveLength(1);
    expect(logs[0]!.placed).toBeGreaterThanOrEqual(1);
    expect(logs[0]!.considered).toBeGreaterThanOrEqual(logs[0]!.placed);
    const hb = await recordHeartbeat(actorFor(agentPrincipal(cluster.id)), nodes[0]!.node.id, {});
    expect(hb.assignments.find((a) => a.kind === "job" && a.job_id === job.id)).toMatchObject({ duration_s: 60 });
  });

  it("explains why a job waits", async () => {
    const { gpuType } = await fleet(1);
    const t = await makeTenant(64);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    await submitJob(asT, { name: "fill", gpu_count: 8, gpu_type: gpuType, priority: 5, max_retries: 0 });
    await runSchedulerCycle("test");
    const waiting = await submitJob(asT, { name: "wait", gpu_count: 2, gpu_type: gpuType, priority: 5, max_retries: 0 });
    await runSchedulerCycle("test");
    expect((await getJobOrThrow(operatorPrincipal, waiting.id)).pendingReason).toMatch(new RegExp(`Needs 2 free ${gpuType} GPUs; 0 free`));
  });

  it("a head pinned to a cluster in maintenance reserves nothing: another cluster's work of its type runs, and it starts when its node returns", async () => {
    // two clusters of one GPU type (unique to this test), one 8-GPU node each
    const gpuType = unique("L").replace(/-/g, "").slice(0, 12).toUpperCase();
    const [c1, c2] = [await makeCluster(), await makeCluster()];
    const nodeIn = async (clusterId: string) => {
      const agent = actorFor(agentPrincipal(clusterId));
      const r = await registerNode(agent, { hostname: unique("n"), gpus: inventory(8, gpuType) });
      await recordHeartbeat(agent, r.node.id, {});
      return r.node.id;
    };
    const n1 = await nodeIn(c1.id);
    await nodeIn(c2.id);
    await changeNodeStatus(operator, n1, "maintenance", "PSU swap");
    const [t1, t2] = [await makeTenant(64), await makeTenant(64)];
    const head = await submitJob(actorFor(tenantAdminPrincipal(t1.id)), {
      name: "pinned-c1",
      gpu_count: 4,
      gpu_type: gpuType,
      priority: 1,
      cluster_id: c1.id,
      max_retries: 0,
    });
    const other = await submitJob(actorFor(tenantAdminPrincipal(t2.id)), {
      name: "pinned-c2",
      gpu_count: 1,
      gpu_type: gpuType,
      priority: 5,
      cluster_id: c2.id,
      max_retries: 0,
    });
    const anywhere = await submitJob(actorFor(tenantAdminPrincipal(t2.id)), {
      name: "anywhere",
      gpu_count: 2,
      gpu_type: gpuType,
      priority: 5,
      max_retries: 0,
    });
    await runSchedulerCycle("test");
    expect((await getJobOrThrow(operatorPrincipal, other.id)).status).toBe("running");
    expect((await getJobOrThrow(operatorPrincipal, anywhere.id)).status).toBe("running");
    const waiting = await getJobOrThrow(operatorPrincipal, head.id);
    expect(waiting.status).toBe("queued");
    expect(waiting.pendingReason).toMatch(/only 0 can take work.*reserves nothing, keeps its place/);
    // capacity returns: the head starts on its own cluster's node
    await changeNodeStatus(operator, n1, "available", "PSU replaced");
    await runSchedulerCycle("test");
    const started = await getJobOrThrow(operatorPrincipal, head.id);
    expect(started.status).toBe("running");
    expect(started.gpus.every((g) => g.nodeId === n1)).toBe(true);
  });

  it("a head waiting for a busy cluster names itself to the work that really competes for those GPUs, and only to it", async () => {
    const gpuType = unique("L").replace(/-/g, "").slice(0, 12).toUpperCase();
    const [c1, c2] = [await makeCluster(), await makeCluster()];
    for (const clusterId of [c1.id, c2.id]) {
      const agent = actorFor(agentPrincipal(clusterId));
      const r = await registerNode(agent, { hostname: unique("n"), gpus: inventory(8, gpuType) });
      await recordHeartbeat(agent, r.node.id, {});
    }
    const t = await makeTenant(64);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    // c1 busy with 6 GPUs for good; its head needs 7 (2 free + 6 held = 8: 1 spare eventually, so 2 more taken there would delay it)
    const fill = await submitJob(asT, { name: "fill-c1", gpu_count: 6, gpu_type: gpuType, priority: 1, cluster_id: c1.id, max_retries: 0 });
    await runSchedulerCycle("test");
    expect((await getJobOrThrow(operatorPrincipal, fill.id)).status).toBe("running");
    const head = await submitJob(asT, { name: "head-c1", gpu_count: 7, gpu_type: gpuType, priority: 1, cluster_id: c1.id, max_retries: 0 });
    const compete = await submitJob(asT, {
      name: "compete-c1",
      gpu_count: 2,
      gpu_type: gpuType,
      priority: 5,
      cluster_id: c1.id,
      max_retries: 0,
      duration_s: 999_999,
    });
    const elsewhere = await submitJob(asT, { name: "c2", gpu_count: 8, gpu_type: gpuType, priority: 5, cluster_id: c2.id, max_retries: 0 });
    await runSchedulerCycle("test");
    expect((await getJobOrThrow(operatorPrincipal, head.id)).pendingReason).toMatch(/Capacity is reserved for it/);
    expect((await getJobOrThrow(operatorPrincipal, compete.id)).pendingReason).toBe(
      `Waiting behind job ${head.id.slice(0, 8)} (priority 1): starting now would delay it`,
    );
    expect((await getJobOrThrow(operatorPrincipal, elsewhere.id)).status).toBe("running");
  });

  it("never double-assigns a GPU or breaks a quota under parallel submits and parallel cycles", async () => {
    const { gpuType } = await fleet(3); // 24 GPUs
    const tenants = await Promise.all([makeTenant(10), makeTenant(10), makeTenant(10)]);
    const submits = tenants.flatMap((t) =>
      Array.from({ length: 8 }, (_, i) =>
        submitJob(actorFor(tenantAdminPrincipal(t.id)), {
          name: `p${i}`,
          gpu_count: 1 + (i % 3),
          gpu_type: gpuType,
          priority: 1 + (i % 3),
          max_retries: 0,
        }),
      ),
    );
    await Promise.all(submits);
    await Promise.all(Array.from({ length: 6 }, () => runSchedulerCycle("parallel")));
    const [dup] = await db().$queryRaw<
      Array<{ n: number }>
    >`SELECT count(*)::int AS n FROM (SELECT allocated_job_id FROM gpus WHERE allocated_job_id IS NOT NULL GROUP BY id HAVING count(*) > 1) x`;
    expect(dup!.n).toBe(0);
    for (const t of tenants) {
      const [row] = await db().$queryRaw<
        Array<{ n: number }>
      >`SELECT count(*)::int AS n FROM gpus g JOIN jobs j ON j.id = g.allocated_job_id WHERE j.tenant_id = ${t.id}::uuid`;
      expect(row!.n).toBeLessThanOrEqual(10);
    }
    const running = await db().job.findMany({
      where: { tenantId: { in: tenants.map((t) => t.id) }, status: "running" },
      include: { _count: { select: { gpus: true } } },
    });
    expect(running.length).toBeGreaterThan(0);
    for (const j of running) expect(j._count.gpus).toBe(j.gpuCount);
  });

  it("the database refuses a second allocation of a GPU, work on a quarantined node, and a partial gang", async () => {
    const { gpuType, nodes } = await fleet(1, 2);
    const t = await makeTenant(8);
    const job = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
      name: "x",
      gpu_count: 2,
      gpu_type: gpuType,
      priority: 5,
      max_retries: 0,
    });
    await runSchedulerCycle("test");
    const other = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
      name: "y",
      gpu_count: 1,
      gpu_type: gpuType,
      priority: 5,
      max_retries: 0,
    });
    const gpu = await db().gpu.findFirstOrThrow({ where: { allocatedJobId: job.id } });
    await expect(db().$executeRaw`UPDATE gpus SET allocated_job_id = ${other.id}::uuid WHERE id = ${gpu.id}::uuid`).rejects.toThrow(
      /already allocated|would hold/,
    );
    await expect(
      db().$transaction(async (tx) => {
        await tx.$executeRaw`UPDATE gpus SET allocated_job_id = NULL WHERE id = ${gpu.id}::uuid`;
      }),
    ).rejects.toThrow(/holds 1 GPUs, needs exactly 2|would hold/);
    // an allocation must name a real job, and a job holding GPUs cannot be deleted
    const spare = await fleet(1, 1);
    const spareGpu = spare.nodes[0]!.gpus[0]!.id;
    await expect(db().$executeRaw`UPDATE gpus SET allocated_job_id = gen_random_uuid() WHERE id = ${spareGpu}::uuid`).rejects.toThrow(
      /does not exist/,
    );
    await expect(db().$executeRaw`DELETE FROM jobs WHERE id = ${job.id}::uuid`).rejects.toThrow(/cannot be deleted/);
    await changeNodeStatus(operator, nodes[0]!.node.id, "quarantined", "test");
    // what the scheduler does, on a quarantined node: start the job and allocate its GPU in one transaction
    await finishJob(operator, job.id, { status: "cancelled" });
    const free = await db().gpu.findFirstOrThrow({ where: { nodeId: nodes[0]!.node.id, allocatedJobId: null } });
    await expect(
      db().$transaction(async (tx) => {
        await tx.$executeRaw`UPDATE jobs SET status = 'running', block_reason = NULL, started_at = now(), fence = gen_random_uuid() WHERE id = ${other.id}::uuid`;
        await tx.$executeRaw`UPDATE gpus SET allocated_job_id = ${other.id}::uuid WHERE id = ${free.id}::uuid`;
      }),
    ).rejects.toThrow(/not available for new work/);
  });

  it("one statement allocating a gang is refused whole when any one of its GPUs is unhealthy, naming that GPU", async () => {
    const { gpuType, nodes } = await fleet(1, 4);
    const t = await makeTenant(8);
    const job = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
      name: "g",
      gpu_count: 4,
      gpu_type: gpuType,
      priority: 5,
      max_retries: 0,
    });
    // the GPU with the highest id goes bad: not the first a scan or an index meets
    const ids = nodes[0]!.gpus.map((g) => g.id).sort();
    const bad = ids[ids.length - 1]!;
    await db().$executeRaw`UPDATE gpus SET status = 'unhealthy', unhealthy_reason = 'test' WHERE id = ${bad}::uuid`;
    await expect(
      db().$transaction(async (tx) => {
        await tx.$executeRaw`UPDATE jobs SET status = 'running', block_reason = NULL, started_at = now(), fence = gen_random_uuid() WHERE id = ${job.id}::uuid AND status = 'queued'`;
        await tx.$executeRaw`UPDATE gpus SET allocated_job_id = ${job.id}::uuid WHERE id = ANY(${ids}::uuid[])`;
      }),
    ).rejects.toThrow(new RegExp(`GPU ${bad} is unhealthy or its node is not available for new work`));
    expect(await heldBy(job.id)).toBe(0);
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).not.toBe("running");
  });
});

describe("quota changes", () => {
  it("lowering a quota below what running jobs hold keeps them running, blocks new work, and GPU updates still work", async () => {
    const { gpuType, cluster, nodes } = await fleet(1);
    const t = await makeTenant(8);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const running = await submitJob(asT, { name: "big", gpu_count: 6, gpu_type: gpuType, priority: 5, max_retries: 0 });
    await runSchedulerCycle("test");
    await updateTenant(systemActor, t.id, { gpu_quota: 2 });
    const next = await submitJob(asT, { name: "next", gpu_count: 1, gpu_type: gpuType, priority: 5, max_retries: 0 });
    expect(next).toMatchObject({ status: "blocked", blockReason: "quota" });
    await runSchedulerCycle("test");
    expect((await getJobOrThrow(operatorPrincipal, running.id)).status).toBe("running");
    // the agent reports one of the job's GPUs unhealthy: the update must not trip the quota check
    const held = await db().gpu.findFirstOrThrow({ where: { allocatedJobId: running.id } });
    await recordHeartbeat(actorFor(agentPrincipal(cluster.id)), nodes[0]!.node.id, { gpus: [{ uuid: held.uuid, healthy: false }] });
    expect((await db().gpu.findUniqueOrThrow({ where: { id: held.id } })).status).toBe("unhealthy");
    // and the database itself refuses growing past the lowered quota
    const free = await db().gpu.findFirstOrThrow({ where: { nodeId: nodes[0]!.node.id, allocatedJobId: null, status: "available" } });
    await expect(
      db().$transaction(async (tx) => {
        await tx.$executeRaw`UPDATE jobs SET status = 'running', block_reason = NULL, started_at = now(), fence = gen_random_uuid() WHERE id = ${next.id}::uuid`;
        await tx.$executeRaw`UPDATE gpus SET allocated_job_id = ${next.id}::uuid WHERE id = ${free.id}::uuid`;
      }),
    ).rejects.toThrow(/over its quota/);
  });
});

describe("completion, retries and lost nodes", () => {
  it("frees GPUs when a job ends, retries a failure after a backoff, and fails for good when retries are spent", async () => {
    const { gpuType, cluster } = await fleet(1);
    const t = await makeTenant(8);
    const job = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
      name: "flaky",
      gpu_count: 4,
      gpu_type: gpuType,
      priority: 5,
      max_retries: 1,
    });
    await runSchedulerCycle("test");
    const agent = actorFor(agentPrincipal(cluster.id));
    const firstRun = await placementOf(job.id);
    const retried = await finishJob(agent, job.id, { status: "failed", exit_code: 3, ...firstRun });
    expect(retried).toMatchObject({ status: "queued", failures: 1, attempts: 1 });
    expect(await heldBy(job.id)).toBe(0);
    await runSchedulerCycle("test"); // inside the backoff: stays queued
    expect((await getJobOrThrow(operatorPrincipal, job.id)).status).toBe("queued");
    await db().$executeRaw`UPDATE jobs SET not_before = now() - interval '1 second' WHERE id = ${job.id}::uuid`;
    await runSchedulerCycle("test");
    expect((await getJobOrThrow(operatorPrincipal, job.id)).attempts).toBe(2);
    const secondRun = await placementOf(job.id);
    expect(secondRun.fence).not.toBe(firstRun.fence);
    // a late report about the first run changes nothing now that the job runs again
    expect(await codeOf(finishJob(agent, job.id, { status: "completed", exit_code: 0, ...firstRun }))).toBe("stale_report");
    const failed = await finishJob(agent, job.id, { status: "failed", exit_code: 3, error: "CUDA OOM", ...secondRun });
    expect(failed).toMatchObject({ status: "failed", failures: 2, error: "CUDA OOM" });
    // a finished job has no current placement: a repeated report is stale and changes nothing
    expect(await codeOf(finishJob(agent, job.id, { status: "completed", ...secondRun }))).toBe("stale_report");
    // and an agent must name the placement at all
    expect(await codeOf(finishJob(agent, job.id, { status: "completed" }))).toBe("validation_failed");
    expect(await codeOf(finishJob(operator, job.id, { status: "completed" }))).toBe("invalid_transition");
  });

  it("lets tenants cancel only their own jobs, and agents report only jobs on their nodes", async () => {
    const { gpuType } = await fleet(1);
    const a = await makeTenant(8);
    const b = await makeTenant(8);
    const job = await submitJob(actorFor(tenantAdminPrincipal(a.id)), {
      name: "mine",
      gpu_count: 1,
      gpu_type: gpuType,
      priority: 5,
      max_retries: 0,
    });
    await runSchedulerCycle("test");
    expect(await codeOf(finishJob(actorFor(tenantAdminPrincipal(b.id)), job.id, { status: "cancelled" }))).toBe("not_found");
    expect(await codeOf(finishJob(actorFor(tenantAdminPrincipal(a.id)), job.id, { status: "completed" }))).toBe("forbidden");
    const otherCluster = await makeCluster();
    expect(
      await codeOf(finishJob(actorFor(agentPrincipal(otherCluster.id)), job.id, { status: "completed", ...(await placementOf(job.id)) })),
    ).toBe("not_found");
    expect((await finishJob(actorFor(tenantAdminPrincipal(a.id)), job.id, { status: "cancelled" })).status).toBe("cancelled");
    expect(await heldBy(job.id)).toBe(0);
  });

  it("requeues work from a quarantined or offline node without spending retries, and places it elsewhere", async () => {
    const { gpuType, nodes } = await fleet(2);
    const t = await makeTenant(16);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const job = await submitJob(asT, { name: "moved", gpu_count: 8, gpu_type: gpuType, priority: 5, max_retries: 0 });
    await runSchedulerCycle("test");
    const first = await getJobOrThrow(operatorPrincipal, job.id);
    const firstNode = first.gpus[0]!.nodeId;
    await changeNodeStatus(operator, firstNode, "quarantined", "XID 79");
    const requeued = await getJobOrThrow(operatorPrincipal, job.id);
    expect(requeued).toMatchObject({ status: "queued", failures: 0 });
    expect(requeued.pendingReason).toMatch(/retries were not spent/);
    await runSchedulerCycle("test");
    const second = await getJobOrThrow(operatorPrincipal, job.id);
    expect(second.status).toBe("running");
    expect(second.gpus.every((g) => g.nodeId !== firstNode)).toBe(true);

    const secondNode = second.gpus[0]!.nodeId;
    await db().$executeRaw`UPDATE nodes SET last_heartbeat_at = now() - interval '1 hour' WHERE id = ${secondNode}::uuid`;
    await sweepUntilOffline(secondNode); // this sweep, or another test file's on the shared database
    expect((await db().node.findUniqueOrThrow({ where: { id: secondNode } })).status).toBe("offline");
    expect(await getJobOrThrow(operatorPrincipal, job.id)).toMatchObject({ status: "queued", failures: 0 });
    expect(nodes).toHaveLength(2);
  });
});

describe("cycles racing cancellations", () => {
  it("a job cancelled while cycles run is never started, and every cycle still completes", async () => {
    const { gpuType } = await fleet(2);
    const t = await makeTenant(16);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const jobs = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        submitJob(asT, { name: `race-${i}`, gpu_count: 1, gpu_type: gpuType, priority: 5, max_retries: 0 }),
      ),
    );
    const results = await Promise.allSettled([
      runSchedulerCycle("race"),
      ...jobs.slice(0, 6).map((j) => finishJob(asT, j.id, { status: "cancelled" })),
      runSchedulerCycle("race"),
    ]);
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    for (const j of jobs.slice(0, 6)) {
      const after = await getJobOrThrow(operatorPrincipal, j.id);
      expect(after.status).toBe("cancelled");
      expect(await heldBy(j.id)).toBe(0);
    }
  });
});

/** Whether some session of this database comes to wait for a lock matching `what` (SQL over pg_stat_activity) within ten seconds. */
async function waiting(what: string): Promise<boolean> {
  // up to 40 s: on a loaded machine (the whole suite, two cores) a cycle can take that long to get there
  for (let i = 0; i < 1600; i++) {
    const { rows } = await pool().query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND ${what}`,
    );
    if (rows[0]!.n > 0) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

describe("cycles racing nodes that leave service", () => {
  it("work a cycle places on a node quarantined at that moment is requeued with the node's other work, never left running there", async () => {
    const { gpuType, nodes } = await fleet(1);
    const nodeId = nodes[0]!.node.id;
    const t = await makeTenant(8);
    // other files' cycles share this database: the node stays out of service until the trap is set,
    // so no cycle can place the job before the one this test holds
    await pool().query("UPDATE nodes SET status = 'maintenance' WHERE id = $1", [nodeId]);
    const job = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
      name: "racer",
      gpu_count: 2,
      gpu_type: gpuType,
      priority: 5,
      max_retries: 0,
    });
    // hold the cycle after it allocated the GPUs and before it commits: it waits to log itself, its
    // last statement (the placements are written by then, in one statement)
    const blocker = new pg.Client({ connectionString: inject("databaseUrl") });
    await blocker.connect();
    await blocker.query("BEGIN");
    await blocker.query("LOCK TABLE scheduler_logs IN SHARE MODE");
    await pool().query("UPDATE nodes SET status = 'available' WHERE id = $1", [nodeId]);
    const cycle = runSchedulerCycle("test: racing a quarantine");
    const placedAndWaiting = waiting("query LIKE 'INSERT INTO scheduler_logs%'");
    const quarantine = (async () => {
      expect(await placedAndWaiting).toBe(true);
      return changeNodeStatus(operator, nodeId, "quarantined", "racing a cycle");
    })();
    // the quarantine either finishes now, blind to the cycle's uncommitted placement, or waits for the
    // cycle's lock. Only once the cycle is held: before it, another file's session waiting for an
    // advisory lock let this test commit the blocker early, and the cycle was never seen held
    expect(await placedAndWaiting).toBe(true);
    await Promise.race([quarantine, waiting("wait_event = 'advisory'")]);
    await blocker.query("COMMIT");
    await blocker.end();
    await cycle;
    await quarantine;

    expect(await db().node.findUniqueOrThrow({ where: { id: nodeId }, select: { status: true } })).toEqual({ status: "quarantined" });
    const after = await getJobOrThrow(operatorPrincipal, job.id);
    expect(after.status).toBe("queued");
    expect(await heldBy(job.id)).toBe(0);
    expect(await db().jobPlacement.count({ where: { jobId: job.id, endedAt: null } })).toBe(0);
  }, 120_000);
});

describe("when runs start", () => {
  it("a run that waited for the allocation lock starts when it takes its GPUs, never before the run that freed them ended", async () => {
    const { cluster, gpuType } = await fleet(1);
    const t = await makeTenant(16);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const first = await submitJob(asT, { name: "first", gpu_count: 8, gpu_type: gpuType, priority: 5, max_retries: 0 });
    await runSchedulerCycle("test");
    const second = await submitJob(asT, { name: "second", gpu_count: 8, gpu_type: gpuType, priority: 5, max_retries: 0 });
    // another allocator holds the lock: this cycle's transaction begins, then waits
    const holder = new pg.Client({ connectionString: inject("databaseUrl") });
    await holder.connect();
    await holder.query("BEGIN");
    await lockForTransaction(holder, "scheduler");
    const cycle = runSchedulerCycle("test: waited for the lock");
    expect(await waiting("wait_event = 'advisory' AND query LIKE '%pg_advisory_xact_lock%'")).toBe(true);
    // meanwhile the first run ends and frees the GPUs the waiting cycle will take
    await new Promise((r) => setTimeout(r, 20));
    await finishJob(actorFor(agentPrincipal(cluster.id)), first.id, {
      status: "completed",
      exit_code: 0,
      ...(await placementOf(first.id)),
    });
    await holder.query("COMMIT");
    await holder.end();
    await cycle;

    const lastPlacement = (jobId: string) => db().jobPlacement.findFirstOrThrow({ where: { jobId }, orderBy: { attempt: "desc" } });
    const [a, b] = [await lastPlacement(first.id), await lastPlacement(second.id)];
    expect(b.endedAt).toBeNull();
    expect(b.startedAt.getTime()).toBeGreaterThanOrEqual(a.endedAt!.getTime());
    // billing follows the same times: the GPU-seconds of the two runs do not overlap
    const firstBilled = await db().usageEvent.aggregate({ where: { jobId: first.id }, _max: { endedAt: true } });
    expect(firstBilled._max.endedAt!.getTime()).toBeLessThanOrEqual(b.startedAt.getTime());
  }, 120_000);
});

describe("listing jobs", () => {
  it("pages through a tenant's jobs newest first, each exactly once", async () => {
    const { gpuType } = await fleet(1);
    const t = await makeTenant(8);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await submitJob(asT, { name: `page-${i}`, gpu_count: 1, gpu_type: gpuType, priority: 5, max_retries: 0 })).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const p = await listJobs(tenantAdminPrincipal(t.id), { limit: 2, cursor });
      seen.push(...p.data.map((j) => j.id));
      cursor = p.nextCursor ?? undefined;
    } while (cursor);
    // jobs submitted in the same millisecond tie on submitted_at and order by id: check each once
    expect(seen).toHaveLength(ids.length);
    expect(new Set(seen)).toEqual(new Set(ids));
  });
});
