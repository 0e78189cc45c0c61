import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { runBurstCycle } from "@/lib/burst/run-burst";
import { db } from "@/lib/db/client";
import { cancelJob } from "@/lib/jobs/cancel-job";
import { submitJob } from "@/lib/jobs/submit-job";
import { jobBurst, listGpuMappings, listOffers, listProviders } from "@/lib/providers/queries";
import { refreshProviderOffers } from "@/lib/providers/refresh-offers";
import { clearGpuMapping, setGpuMapping } from "@/lib/providers/set-gpu-mapping";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { updateTenant } from "@/lib/tenants/update-tenant";
import {
  actorFor,
  availableFleet,
  makeTenant,
  operatorPrincipal,
  tenantAdminPrincipal,
  tenantMemberPrincipal,
  unique,
} from "../support/fixtures";
import { codeOf } from "../support/outcomes";
import { takeProviderStateTurn } from "../support/test-turns";
import { startLambdaStandIn } from "../support/provider-standins/lambda";

// Offers with our price, the operator's GPU-type mapping, tenants' burst settings and their
// refusals, and one job never getting two instances however many cycles run at once.

let lambda: Awaited<ReturnType<typeof startLambdaStandIn>>;
const tag = unique("q").slice(2);
const gpuName = `Q${tag} (80 GB SXM5)`;

let releaseProviders: (() => Promise<void>) | undefined;
beforeAll(async () => {
  releaseProviders = await takeProviderStateTurn();
  lambda = await startLambdaStandIn({
    types: [
      { name: `gpu_1x_q${tag}`, gpu_description: gpuName, price_cents_per_hour: 199, gpus: 1, capacity: { "us-east-1": 5 } },
      { name: `gpu_8x_q${tag}`, gpu_description: gpuName, price_cents_per_hour: 1592, gpus: 8, capacity: { "us-south-1": 1 } },
    ],
  });
  Object.assign(process.env, {
    LAMBDA_API_KEY: lambda.key,
    LAMBDA_API_URL: lambda.url,
    LAMBDA_SSH_KEY_NAME: "gpuforge",
    LAMBDA_MARKUP_PCT: "25",
    PROVIDER_TIMEOUT_MS: "1500",
    BURST_WAIT_S: "0",
    NEXTAUTH_URL: "http://127.0.0.1:9",
  });
  // the other burst file may hold the turn for its whole run
}, 600_000);
afterAll(async () => {
  await lambda?.close();
  await releaseProviders?.();
});

const operator = actorFor(operatorPrincipal);

describe("offers", () => {
  it("keep the good ones of an answer with a malformed offer, skipping it, and never throw for what the provider said", async () => {
    const good = {
      offerId: `ok-${tag}|1x|od|r`,
      providerGpuType: gpuName,
      gpuCount: 1,
      region: "r",
      interruptible: false,
      costCentsPerGpuHour: 199,
    };
    // the offers other files cached for vast stay in the answer (the refresh replaces the provider's all)
    const cached = (await db().providerOffer.findMany({ where: { provider: "vast" } })).map((o) => ({
      offerId: o.offerId,
      providerGpuType: o.providerGpuType,
      gpuCount: o.gpuCount,
      region: o.region,
      interruptible: o.interruptible,
      costCentsPerGpuHour: o.costCentsPerGpuHour,
    }));
    const adapter = {
      name: "vast" as const,
      listOffers: async () => [
        ...cached,
        good,
        { ...good, offerId: `huge-${tag}`, costCentsPerGpuHour: 5_000_000_000 },
        { ...good, offerId: `typed-${tag}`, providerGpuType: 42 as unknown as string },
      ],
      launch: async () => ({ externalId: "" }),
      status: async () => ({ externalId: "", name: null, state: "gone" as const, providerStatus: "" }),
      terminate: async () => {},
      listInstances: async () => [],
    };
    expect(await refreshProviderOffers("vast", adapter)).toEqual({ provider: "vast", offers: cached.length + 1, skipped: 2 });
    const stored = (await db().providerOffer.findMany({ where: { provider: "vast" } })).map((o) => o.offerId);
    expect(stored).toContain(good.offerId);
    expect(stored.some((id) => id.startsWith("huge-") || id.startsWith("typed-"))).toBe(false);
  });

  it("are refreshed into the cache with our price, half up to a cent, and their age; a failed refresh keeps them and says why", async () => {
    const ours = unique("Q").replace(/-/g, "").toUpperCase();
    await setGpuMapping(operator, { provider: "lambda", provider_gpu_type: gpuName, gpu_type: ours });
    expect(await refreshProviderOffers("lambda")).toMatchObject({ provider: "lambda", offers: 2 });
    const offers = await listOffers(operatorPrincipal, { gpu_type: ours });
    // 199 × 1.25 = 248.75 → 249; the 8× type is 1592 / 8 = 199 per GPU, the same price
    expect(offers.map((o) => [o.offer_id, o.gpu_count, o.cost_cents_per_gpu_hour, o.price_cents_per_gpu_hour])).toEqual([
      [`gpu_1x_q${tag}@us-east-1`, 1, 199, 249],
      [`gpu_8x_q${tag}@us-south-1`, 8, 199, 249],
    ]);
    expect(offers.every((o) => o.age_s >= 0 && o.gpu_type === ours)).toBe(true);
    expect((await listOffers(operatorPrincipal, { gpu_type: ours, gpu_count: 2 })).map((o) => o.gpu_count)).toEqual([8]);

    lambda.faults.add("offers", { kind: "status", status: 502, body: {} });
    expect((await refreshProviderOffers("lambda")).error).toMatch(/502/);
    expect(await listOffers(operatorPrincipal, { gpu_type: ours })).toHaveLength(2);
    const row = (await listProviders(operatorPrincipal)).find((p) => p.name === "lambda")!;
    expect(row).toMatchObject({ enabled: true, markup_pct: 25, offers: expect.any(Number) });
    expect(row.last_error).toMatch(/502/);
    expect(row.offers_refreshed_at).not.toBeNull();
    await expect(codeOf(listOffers(tenantAdminPrincipal((await makeTenant()).id)))).resolves.toBe("forbidden");
  });

  it("follow the operator's mapping at once, and go back to the built-in one when it is cleared", async () => {
    await refreshProviderOffers("lambda");
    await setGpuMapping(operator, { provider: "lambda", provider_gpu_type: gpuName, gpu_type: null });
    const mine = (await listOffers(operatorPrincipal, { provider: "lambda" })).filter((o) => o.provider_gpu_type === gpuName);
    expect(mine.every((o) => o.gpu_type === null)).toBe(true);
    const m = (await listGpuMappings(operatorPrincipal)).find((x) => x.provider_gpu_type === gpuName)!;
    expect(m).toMatchObject({ gpu_type: null, source: "operator" });
    const cleared = await clearGpuMapping(operator, { provider: "lambda", provider_gpu_type: gpuName });
    // "Q… (80 GB SXM5)" names no model the built-in map knows
    expect(cleared).toMatchObject({ gpu_type: null, source: "built-in" });
  });
});

describe("tenants' burst settings", () => {
  it("a tenant admin cannot turn burst on until the operator allows it, nor allow it itself", async () => {
    const t = await makeTenant();
    const admin = actorFor(tenantAdminPrincipal(t.id));
    await expect(updateTenant(admin, t.id, { burst: { enabled: true, max_price_cents_per_gpu_hour: 1_000_000 } })).rejects.toMatchObject({
      code: "forbidden",
      message: expect.stringMatching(/operator has not allowed burst/),
    });
    await expect(
      codeOf(updateTenant(admin, t.id, { burst: { enabled: true, allowed: true, max_price_cents_per_gpu_hour: 350 } })),
    ).resolves.toBe("forbidden");
    expect(await db().tenant.findUniqueOrThrow({ where: { id: t.id } })).toMatchObject({ burstEnabled: false, burstAllowed: false });
    // the operator allows it (burst stays off); the admin turns it on; withdrawing the allowance turns it off
    expect(await updateTenant(systemActor, t.id, { burst: { enabled: false, allowed: true } })).toMatchObject({
      burstEnabled: false,
      burstAllowed: true,
    });
    await updateTenant(admin, t.id, { burst: { enabled: true, max_price_cents_per_gpu_hour: 350 } });
    expect(await updateTenant(systemActor, t.id, { burst: { enabled: false, allowed: false } })).toMatchObject({
      burstEnabled: false,
      burstAllowed: false,
    });
    await expect(codeOf(updateTenant(admin, t.id, { burst: { enabled: true } }))).resolves.toBe("forbidden");
    // an operator cannot turn it on while withdrawing the allowance; turning it on allows it
    await expect(updateTenant(systemActor, t.id, { burst: { enabled: true, allowed: false } })).rejects.toMatchObject({
      code: "validation_failed",
      details: [{ path: "burst.allowed" }],
    });
    expect(await updateTenant(systemActor, t.id, { burst: { enabled: true } })).toMatchObject({ burstEnabled: true, burstAllowed: true });
    // the database refuses burst on without the allowance, whatever path writes it
    await expect(db().tenant.update({ where: { id: t.id }, data: { burstAllowed: false } })).rejects.toThrow();
  });

  it("a tenant admin turns its own burst on with a cap; nothing else, and no other tenant's", async () => {
    const t = await makeTenant();
    const other = await makeTenant();
    await db().tenant.updateMany({ where: { id: { in: [t.id, other.id] } }, data: { burstAllowed: true } });
    const admin = actorFor(tenantAdminPrincipal(t.id));
    const updated = await updateTenant(admin, t.id, { burst: { enabled: true, max_price_cents_per_gpu_hour: 350 } });
    expect(updated).toMatchObject({ burstEnabled: true, burstMaxPriceCentsPerGpuHour: 350 });
    await expect(codeOf(updateTenant(admin, t.id, { gpu_quota: 999 }))).resolves.toBe("forbidden");
    await expect(codeOf(updateTenant(admin, other.id, { burst: { enabled: true, max_price_cents_per_gpu_hour: 1 } }))).resolves.toBe(
      "not_found",
    );
    await expect(codeOf(updateTenant(actorFor(tenantMemberPrincipal(t.id)), t.id, { burst: { enabled: false } }))).resolves.toBe(
      "forbidden",
    );
    expect((await db().tenant.findUniqueOrThrow({ where: { id: other.id } })).burstEnabled).toBe(false);
    // off keeps the cap for next time; on without any cap is refused, naming the field
    expect(await updateTenant(admin, t.id, { burst: { enabled: false } })).toMatchObject({
      burstEnabled: false,
      burstMaxPriceCentsPerGpuHour: 350,
    });
    const fresh = await makeTenant();
    await expect(updateTenant(systemActor, fresh.id, { burst: { enabled: true } })).rejects.toMatchObject({
      code: "validation_failed",
      details: [{ path: "burst.max_price_cents_per_gpu_hour" }],
    });
    // and the database refuses it whatever path writes it
    await expect(db().tenant.update({ where: { id: fresh.id }, data: { burstEnabled: true } })).rejects.toThrow();
  });
});

describe("submitting work the fleet cannot hold", () => {
  it("is accepted for a tenant whose burst can reach an offer of that size, and refused (422) for others", async () => {
    const ours = unique("S").replace(/-/g, "").toUpperCase();
    await refreshProviderOffers("lambda");
    await db().providerOffer.updateMany({ where: { provider: "lambda", providerGpuType: gpuName }, data: { gpuType: ours } });
    const bursting = await makeTenant(16);
    await updateTenant(systemActor, bursting.id, { burst: { enabled: true, max_price_cents_per_gpu_hour: 300 } });
    const job = await submitJob(systemActor, {
      tenant_id: bursting.id,
      name: "only-rented",
      gpu_count: 8,
      gpu_type: ours,
      priority: 5,
      max_retries: 0,
    });
    expect(job.status).toBe("queued");
    // before anything is rented, its page quotes the offer it would take: 8 GPUs at $2.49
    expect(await jobBurst(operatorPrincipal, job.id)).toMatchObject({
      bursting: false,
      quote: { provider: "lambda", price_cents_per_gpu_hour: 249 },
      estimate: { price_cents_per_gpu_hour: 249, estimated_total_cents: null, cost_so_far_cents: 0 },
      attempts: [],
    });
    await cancelJob(systemActor, job.id);
    const plain = await makeTenant(16);
    await expect(
      codeOf(submitJob(systemActor, { tenant_id: plain.id, name: "nowhere", gpu_count: 8, gpu_type: ours, priority: 5, max_retries: 0 })),
    ).resolves.toBe("unsatisfiable");
    // more GPUs than any offer has, or a cap under every offer's cost: still refused
    await expect(
      codeOf(
        submitJob(systemActor, { tenant_id: bursting.id, name: "too-big", gpu_count: 16, gpu_type: ours, priority: 5, max_retries: 0 }),
      ),
    ).resolves.toBe("unsatisfiable");
    await updateTenant(systemActor, bursting.id, { burst: { enabled: true, max_price_cents_per_gpu_hour: 100 } });
    await expect(
      codeOf(
        submitJob(systemActor, { tenant_id: bursting.id, name: "too-dear", gpu_count: 8, gpu_type: ours, priority: 5, max_retries: 0 }),
      ),
    ).resolves.toBe("unsatisfiable");
    // a cap over the offers' cost (199) but under our price (249, with the 25 % markup): refused too,
    // since no launch could follow (the burst cycle compares our price)
    await updateTenant(systemActor, bursting.id, { burst: { enabled: true, max_price_cents_per_gpu_hour: 220 } });
    await expect(
      codeOf(
        submitJob(systemActor, { tenant_id: bursting.id, name: "under-price", gpu_count: 8, gpu_type: ours, priority: 5, max_retries: 0 }),
      ),
    ).resolves.toBe("unsatisfiable");
    // a 1-GPU job pays the whole 8-GPU instance: at 249 per GPU-hour the 1× offer fits, the 8× would not
    await db().providerOffer.updateMany({ where: { provider: "lambda", gpuType: ours, gpuCount: 1 }, data: { gpuType: null } });
    await updateTenant(systemActor, bursting.id, { burst: { enabled: true, max_price_cents_per_gpu_hour: 300 } });
    await expect(
      codeOf(
        submitJob(systemActor, { tenant_id: bursting.id, name: "one-of-8", gpu_count: 1, gpu_type: ours, priority: 5, max_retries: 0 }),
      ),
    ).resolves.toBe("unsatisfiable");
  });
});

describe("burst under parallel cycles", () => {
  it("one waiting job gets one instance however many cycles run at once", async () => {
    const ours = unique("P").replace(/-/g, "").toUpperCase();
    await setGpuMapping(operator, { provider: "lambda", provider_gpu_type: gpuName, gpu_type: ours });
    await refreshProviderOffers("lambda");
    const fleet = await availableFleet(1, 1, "P");
    await db().providerOffer.updateMany({ where: { provider: "lambda", providerGpuType: gpuName }, data: { gpuType: fleet.gpuType } });
    const blocker = await makeTenant(1);
    await submitJob(systemActor, {
      tenant_id: blocker.id,
      name: "blocker",
      gpu_count: 1,
      gpu_type: fleet.gpuType,
      priority: 1,
      max_retries: 0,
    });
    await runSchedulerCycle("test");
    const t = await makeTenant(8);
    await updateTenant(systemActor, t.id, { burst: { enabled: true, max_price_cents_per_gpu_hour: 300 } });
    const job = await submitJob(systemActor, {
      tenant_id: t.id,
      name: "wants-one",
      gpu_count: 1,
      gpu_type: fleet.gpuType,
      priority: 5,
      max_retries: 0,
    });
    const results = await Promise.allSettled(Array.from({ length: 4 }, () => runBurstCycle()));
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    expect(await db().providerInstance.count({ where: { jobId: job.id, status: { in: ["launching", "booting", "running"] } } })).toBe(1);
    expect(lambda.live().filter((i) => i.name.startsWith("gpuforge-")).length).toBe(1);
    const burst = await jobBurst(tenantAdminPrincipal(t.id), job.id);
    expect(burst).toMatchObject({ bursting: true, instance: { provider: "lambda", price_cents_per_gpu_hour: 249, node_id: null } });
    expect(burst.attempts.map((a) => a.outcome)).toEqual(["launched"]);
    await expect(codeOf(jobBurst(tenantAdminPrincipal(blocker.id), job.id))).resolves.toBe("not_found");
    await cancelJob(systemActor, job.id);
  });
});
