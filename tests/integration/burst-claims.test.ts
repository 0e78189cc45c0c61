import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { claimLaunch } from "@/lib/burst/claim-launch";
import type { PricedOffer } from "@/lib/burst/policy";
import { LAUNCH_COMMITMENTS, RELEASE_UNNEEDED } from "@/lib/burst/statements";
import { providerCluster } from "@/lib/burst/records";
import { db, pool } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import { cancelJob } from "@/lib/jobs/cancel-job";
import { submitJob } from "@/lib/jobs/submit-job";
import { createReservation } from "@/lib/reservations/create-reservation";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { updateTenant } from "@/lib/tenants/update-tenant";
import { asTenantAdmin, availableFleet, makeTenant } from "../support/fixtures";
import { takeProviderStateTurn } from "../support/test-turns";

// Launch decisions against the real database: what is committed (an hour of every live instance,
// the GPUs rented for waiting jobs) is counted under the tenant's and the provider's burst locks,
// so callers deciding at once never rent past a cap or a quota between them.

let gpuType = "";
let releaseProviders: (() => Promise<void>) | undefined;
afterAll(async () => {
  await releaseProviders?.();
});
beforeAll(async () => {
  // the providers' daily spend is one figure for the whole database: the burst files take turns
  releaseProviders = await takeProviderStateTurn();
  // a fleet of the type exists (the jobs are satisfiable) but is in maintenance: other files' scheduler
  // cycles share this database, and none may place these jobs, which must wait
  const fleet = await availableFleet(1, 8, "CLAIM");
  gpuType = fleet.gpuType;
  await pool().query("UPDATE nodes SET status = 'maintenance' WHERE id = ANY($1::uuid[])", [fleet.nodes.map((n) => n.node.id)]);
}, 600_000);
const offer = (over: Partial<PricedOffer> = {}): PricedOffer => ({
  provider: "runpod",
  offerId: `${gpuType}|1x|od|US`,
  providerGpuType: `NVIDIA ${gpuType}`,
  gpuType,
  gpuCount: 1,
  region: "US-KS-2",
  interruptible: false,
  costCentsPerGpuHour: 300,
  priceCentsPerGpuHour: 374,
  refreshedAt: new Date(),
  ...over,
});
const caps = (hourly: number, daily = 1_000_000) => ({
  tenantHourlyCapCents: hourly,
  tenantDailyCapCents: daily,
  providerDailyCapCents: { runpod: 1_000_000, lambda: 1_000_000, vast: 1_000_000 },
});

async function burstingTenant(quota: number) {
  const t = await makeTenant(quota);
  await updateTenant(systemActor, t.id, { burst: { enabled: true, max_price_cents_per_gpu_hour: 400 } });
  return t;
}
const queued = async (tenantId: string, n: number) => {
  const jobs = [];
  for (let i = 0; i < n; i++)
    jobs.push(
      await submitJob(systemActor, {
        tenant_id: tenantId,
        name: `claim-${i}`,
        gpu_count: 1,
        gpu_type: gpuType,
        priority: 5,
        max_retries: 0,
      }),
    );
  return jobs.map((j) => ({ id: j.id, tenantId, gpuType, gpuCount: 1, needsContainers: false, maxRetries: 0 }));
};

describe("claiming a launch", () => {
  it("parallel claims of one tenant never commit past its hourly cap (an hour of each live instance counts)", async () => {
    const t = await burstingTenant(64);
    const jobs = await queued(t.id, 8);
    const cluster = await providerCluster("runpod", "US-KS-2");
    // 1000 ¢/h allows two instances at 374 ¢/h, not three
    const claims = await Promise.all(jobs.map((j) => claimLaunch(j, offer(), cluster, caps(1000))));
    expect(claims.filter((c) => c.outcome === "claimed")).toHaveLength(2);
    const refused = claims.filter((c) => c.outcome === "refused");
    expect(refused).toHaveLength(6);
    for (const r of refused) expect(r.outcome === "refused" && r.refusal.kind).toBe("cap");
    const live = await db().providerInstance.findMany({ where: { tenantId: t.id, status: "launching" } });
    expect(live.reduce((s, i) => s + i.priceCentsPerGpuHour * i.gpuCount, 0)).toBeLessThanOrEqual(1000);
    // a later cycle sees the same commitment: still nothing more
    const later = await claimLaunch(jobs[7]!, offer(), cluster, caps(1000));
    expect(later.outcome).toBe("refused");
  });

  it("parallel claims never rent past the quota beside the GPUs already rented for waiting jobs", async () => {
    const t = await burstingTenant(1);
    const jobs = await queued(t.id, 4);
    const cluster = await providerCluster("runpod", "US-KS-2");
    const claims = await Promise.all(jobs.map((j) => claimLaunch(j, offer(), cluster, caps(1_000_000))));
    expect(claims.filter((c) => c.outcome === "claimed")).toHaveLength(1);
    for (const c of claims.filter((x) => x.outcome === "refused")) expect(c.outcome === "refused" && c.refusal.kind).toBe("quota");
  });

  it("one provider's daily cap holds across tenants deciding at once", async () => {
    const tenants = await Promise.all(Array.from({ length: 4 }, () => burstingTenant(64)));
    const jobs = (await Promise.all(tenants.map((t) => queued(t.id, 2)))).flat();
    const cluster = await providerCluster("lambda", "us-east-1");
    const o = offer({
      provider: "lambda",
      region: "us-east-1",
      offerId: `${gpuType}@us-east-1`,
      costCentsPerGpuHour: 1000,
      priceCentsPerGpuHour: 1100,
    });
    // what lambda is already committed to today (earlier tests' instances: spent, and an hour of each
    // live one), read as the claim reads it, plus room for 3 more hours of 1000 ¢
    const now = Date.now();
    const committed = await runOne(pool(), LAUNCH_COMMITMENTS, [
      tenants[0]!.id,
      "lambda",
      new Date(now - 3_600_000),
      new Date(new Date(now).toISOString().slice(0, 10) + "T00:00:00Z"),
      jobs[0]!.id,
    ]);
    const limits = {
      ...caps(1_000_000),
      providerDailyCapCents: { runpod: 1e6, lambda: Number(committed!.provider_day_cost_cents) + 3000 + 999, vast: 1e6 },
    };
    const claims = await Promise.all(jobs.map((j) => claimLaunch(j, o, cluster, limits)));
    expect(claims.filter((c) => c.outcome === "claimed")).toHaveLength(3);
  });

  it("a job that is no longer queued, or already has its instance, stands down", async () => {
    const t = await burstingTenant(64);
    const [a, b] = await queued(t.id, 2);
    const cluster = await providerCluster("runpod", "US-KS-2");
    expect((await claimLaunch(a!, offer(), cluster, caps(1_000_000))).outcome).toBe("claimed");
    expect((await claimLaunch(a!, offer(), cluster, caps(1_000_000))).outcome).toBe("stood_down");
    await cancelJob(systemActor, b!.id);
    expect((await claimLaunch(b!, offer(), cluster, caps(1_000_000))).outcome).toBe("stood_down");
  });

  it("an instance whose job is blocked (or cancelled) is released, so the idle limit ends it", async () => {
    const t = await burstingTenant(64);
    const [a, b, c] = await queued(t.id, 3);
    const cluster = await providerCluster("runpod", "US-KS-2");
    const ids: string[] = [];
    for (const j of [a!, b!, c!]) {
      const claim = await claimLaunch(j, offer(), cluster, caps(1_000_000));
      if (claim.outcome !== "claimed") throw new Error(claim.outcome);
      ids.push(claim.instanceId);
    }
    for (const id of ids)
      await db().providerInstance.update({ where: { id }, data: { status: "running", externalId: `ext-${id}`, launchedAt: new Date() } });
    await db().job.update({ where: { id: a!.id }, data: { status: "blocked", blockReason: "quota" } });
    await cancelJob(systemActor, b!.id);
    const released = await run(pool(), RELEASE_UNNEEDED);
    expect(new Set(released.map((r) => r.job_id)).has(a!.id)).toBe(true);
    expect(new Set(released.map((r) => r.job_id)).has(b!.id)).toBe(true);
    const rows = await db().providerInstance.findMany({ where: { id: { in: ids } } });
    const byJob = (id: string) => rows.find((r) => r.id === ids[[a!.id, b!.id, c!.id].indexOf(id)])!;
    expect(byJob(a!.id).jobId).toBeNull();
    expect(byJob(a!.id).idleSince).not.toBeNull();
    expect(byJob(b!.id).jobId).toBeNull();
    // the job still waiting in the queue keeps its instance
    expect(byJob(c!.id).jobId).toBe(c!.id);
    await db().providerInstance.updateMany({
      where: { id: { in: ids } },
      data: { status: "terminated", terminatedAt: new Date(), jobId: null },
    });
  });
});

describe("a node rented from a provider", () => {
  it("is no one's to reserve: capacity leaves it out, a booking is refused, and the database refuses to hold it", async () => {
    const fleet = await availableFleet(2, 8, "RENT");
    const [rented, own] = fleet.nodes.map((n) => n.node.id);
    const renter = await burstingTenant(64);
    // it waits from the start: other files' scheduler cycles share this database, and one that ran
    // between a submit and a later "not before" could start it on the fleet's own node
    const job = await db().job.create({
      data: {
        tenantId: renter.id,
        name: "rented",
        gpuCount: 1,
        gpuType: fleet.gpuType,
        priority: 5,
        status: "queued",
        notBefore: new Date(Date.now() + 86_400_000),
      },
    });
    // the node is the instance rented for the renter's waiting job
    await db().providerInstance.create({
      data: {
        provider: "runpod",
        region: "US-KS-2",
        offerId: `rent-${rented}`,
        providerGpuType: "NVIDIA RENT",
        gpuType: fleet.gpuType,
        gpuCount: 8,
        interruptible: false,
        costCentsPerGpuHour: 300,
        priceCentsPerGpuHour: 374,
        clusterId: fleet.cluster.id,
        tenantId: renter.id,
        jobId: job.id,
        nodeId: rented!,
        status: "running",
        externalId: `ext-${rented}`,
        launchedAt: new Date(),
      },
    });
    const other = await makeTenant(64);
    const now = Date.now();
    const book = (nodes: number) =>
      createReservation(asTenantAdmin(other.id), {
        gpu_type: fleet.gpuType,
        node_count: nodes,
        starts_at: new Date(now + 60_000).toISOString(),
        ends_at: new Date(now + 3_600_000).toISOString(),
      });
    // one node of the type is the fleet's own: that one is booked; two cannot be
    await expect(book(2)).rejects.toMatchObject({ code: "unsatisfiable" });
    const r = await book(1);
    const held = await db().$queryRawUnsafe<Array<{ node_id: string }>>(
      `SELECT node_id::text FROM reservation_nodes WHERE reservation_id = $1::uuid`,
      r.id,
    );
    expect(held.map((h) => h.node_id)).toEqual([own]);
    // whatever path writes a holding, the database refuses a rented node
    await expect(
      pool().query(
        `INSERT INTO reservation_nodes (reservation_id, tenant_id, node_id, gpu_count, starts_at, ends_at) VALUES ($1, $2, $3, 8, $4, $5)`,
        [r.id, other.id, rented, new Date(now + 60_000), new Date(now + 3_600_000)],
      ),
    ).rejects.toThrow(/rented from a GPU provider/);
  });
});

describe("a job on a provider instance", () => {
  it("pays for every GPU of the instance, not only those it holds (the provider charges them all)", async () => {
    const fleet = await availableFleet(1, 8, "WHOLE");
    const renter = await burstingTenant(64);
    const job = await submitJob(systemActor, {
      tenant_id: renter.id,
      name: "one-of-eight",
      gpu_count: 1,
      gpu_type: fleet.gpuType,
      priority: 5,
      max_retries: 0,
    });
    // the fleet's one node of the type is the 8-GPU instance rented for the job
    await db().providerInstance.create({
      data: {
        provider: "runpod",
        region: "US-KS-2",
        offerId: `whole-${job.id}`,
        providerGpuType: "NVIDIA WHOLE",
        gpuType: fleet.gpuType,
        gpuCount: 8,
        interruptible: false,
        costCentsPerGpuHour: 300,
        priceCentsPerGpuHour: 374,
        clusterId: fleet.cluster.id,
        tenantId: renter.id,
        jobId: job.id,
        nodeId: fleet.nodes[0]!.node.id,
        status: "running",
        externalId: `ext-whole-${job.id}`,
        launchedAt: new Date(),
      },
    });
    await runSchedulerCycle("test");
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("running");
    await new Promise((r) => setTimeout(r, 1500));
    await cancelJob(systemActor, job.id);
    const usage = await db().usageEvent.findMany({ where: { jobId: job.id } });
    expect(usage.length).toBeGreaterThan(0);
    for (const u of usage) {
      expect(u).toMatchObject({ provider: "runpod", gpuCount: 1, centsPerHour: 374 * 8, costCentsPerHour: 300 * 8 });
      // at least the provider's cost of the whole instance plus the markup
      expect(Number(u.amountCents)).toBe(Math.round((Number(u.gpuSeconds) * 374 * 8) / 3600));
    }
    await db().providerInstance.updateMany({ where: { jobId: job.id }, data: { status: "terminated", terminatedAt: new Date() } });
  });
});
