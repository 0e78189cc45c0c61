import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootSimulatedInstance, type SimulatedInstance } from "@/agent/src/sim-provider-instance";
import { systemActor } from "@/lib/auth/principal";
import { runBurstCycle } from "@/lib/burst/run-burst";
import { installationId, instanceName } from "@/lib/burst/installation";
import { reconcileInstances } from "@/lib/burst/reconcile-instances";
import { db } from "@/lib/db/client";
import { cancelJob } from "@/lib/jobs/cancel-job";
import { submitJob } from "@/lib/jobs/submit-job";
import { refreshAllOffers } from "@/lib/providers/refresh-offers";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { updateTenant } from "@/lib/tenants/update-tenant";
import { startAgentApi } from "../support/agent-api";
import { availableFleet, makeTenant, unique } from "../support/fixtures";
import type { Booted } from "../support/provider-standins/base";
import { startLambdaStandIn } from "../support/provider-standins/lambda";
import { startRunpodStandIn } from "../support/provider-standins/runpod";
import { takeProviderStateTurn } from "../support/test-turns";
import { startVastStandIn } from "../support/provider-standins/vast";

// The whole burst flow in the simulator, against the three providers' stand-ins: a job that waits
// beyond the threshold for local capacity is launched on the cheapest suitable offer; the
// stand-in "boots" the instance by starting a simulated node agent with the environment the start
// script would give it; the agent registers with its node-bound key; the scheduler places the job
// there; it runs, the instance goes idle and is terminated. Along the way: capacity errors, a
// provider outage, an instance that never registers, an interruption, the spend cap, a stray.

let api: Awaited<ReturnType<typeof startAgentApi>>;
let runpod: Awaited<ReturnType<typeof startRunpodStandIn>>;
let lambda: Awaited<ReturnType<typeof startLambdaStandIn>>;
let vast: Awaited<ReturnType<typeof startVastStandIn>>;
const agents = new Map<string, SimulatedInstance>();
/** providers whose next booted instance stays silent (its agent never starts) */
const silent = new Set<string>();
const stateDir = mkdtempSync(path.join(os.tmpdir(), "burst-flow-"));
let gpuType = "";
let tenantId = "";
const tag = unique("x").slice(2);
const names = { runpod: `NVIDIA Z${tag} 80GB HBM3`, lambda: `Z${tag} (80 GB PCIe)`, vast: `Z${tag} SXM` };

const boot = (provider: string) => (b: Booted) => {
  if (silent.delete(provider)) return;
  // an instance launched without our start mechanism's variables (not by us) runs no agent of ours
  if (!b.env.GPUFORGE_AGENT_KEY) return;
  agents.set(b.id, bootSimulatedInstance({ env: b.env, gpuType, gpuCount: b.gpuCount, stateDir, heartbeatS: 1 }));
};

let releaseProviders: (() => Promise<void>) | undefined;
beforeAll(async () => {
  releaseProviders = await takeProviderStateTurn();
  runpod = await startRunpodStandIn({
    onBoot: boot("runpod"),
    bootMs: 50,
    dataCenters: ["US-KS-2"],
    gpus: [{ id: names.runpod, displayName: "Z SXM", memoryInGb: 80, maxGpuCount: 8, securePrice: 2.99, secureSpotPrice: 1.75 }],
  });
  lambda = await startLambdaStandIn({
    onBoot: boot("lambda"),
    bootMs: 50,
    types: [{ name: `gpu_1x_z${tag}`, gpu_description: names.lambda, price_cents_per_hour: 249, gpus: 1, capacity: { "us-east-1": 6 } }],
  });
  vast = await startVastStandIn({
    onBoot: boot("vast"),
    bootMs: 50,
    asks: [
      { id: 9101, gpu_name: names.vast, num_gpus: 1, dph_total: 2.3, min_bid: 1.9, geolocation: "Texas, US" },
      { id: 9102, gpu_name: names.vast, num_gpus: 1, dph_total: 3.1, min_bid: 2.5, geolocation: "Quebec, CA" },
    ],
  });
  api = await startAgentApi();
  Object.assign(process.env, {
    NEXTAUTH_URL: api.url,
    RUNPOD_API_KEY: runpod.key,
    RUNPOD_API_URL: runpod.url,
    LAMBDA_API_KEY: lambda.key,
    LAMBDA_API_URL: lambda.url,
    LAMBDA_SSH_KEY_NAME: "gpuforge",
    VAST_API_KEY: vast.key,
    VAST_API_URL: vast.url,
    PROVIDER_TIMEOUT_MS: "2000",
    BURST_WAIT_S: "1",
    BURST_IDLE_S: "3",
    BURST_REGISTER_DEADLINE_S: "10",
    BURST_STATUS_CHECK_S: "1",
    BURST_BACKOFF_S: "120",
    BURST_TENANT_HOURLY_CAP_CENTS: "2500",
  });
  // the local fleet of this type is full: one node of 8 GPUs, held by another tenant's long job
  const fleet = await availableFleet(1, 8, "Z");
  gpuType = fleet.gpuType;
  const other = await makeTenant(8);
  await submitJob(systemActor, {
    tenant_id: other.id,
    name: "local-blocker",
    gpu_count: 8,
    gpu_type: gpuType,
    priority: 1,
    max_retries: 0,
  });
  await runSchedulerCycle("test");
  for (const [provider, name] of Object.entries(names))
    await db().providerGpuMapping.upsert({
      where: { provider_providerGpuType: { provider, providerGpuType: name } },
      create: { provider, providerGpuType: name, gpuType, updatedBy: "test" },
      update: { gpuType },
    });
  const tenant = await makeTenant(64);
  tenantId = tenant.id;
  await updateTenant(systemActor, tenantId, { burst: { enabled: true, max_price_cents_per_gpu_hour: 400 } });
  const refreshed = await refreshAllOffers();
  expect(refreshed.failed).toEqual([]);
  // the other burst file may hold the turn for its whole run
}, 600_000);

afterAll(async () => {
  for (const a of agents.values()) a.stop();
  await Promise.all([api?.close(), runpod?.close(), lambda?.close(), vast?.close()]);
  await releaseProviders?.();
});

async function tick() {
  await runBurstCycle();
  await runSchedulerCycle("burst test");
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 40_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await tick();
    await new Promise((r) => setTimeout(r, 150));
  }
}

const attemptsOf = async (jobId: string) =>
  (
    await db().burstAttempt.findMany({
      where: { jobId },
      orderBy: { id: "asc" },
      select: { outcome: true, provider: true, instanceId: true },
    })
  ).map((a) => `${a.outcome}${a.provider ? `@${a.provider}` : ""}`);

// each scenario starts with nothing rented (an idle instance would take the next job)
const nothingRented = () =>
  until(
    "every instance to end",
    async () =>
      (await db().providerInstance.count({ where: { tenantId, status: { in: ["launching", "booting", "running", "terminating"] } } })) ===
      0,
  );

const submit = (name: string, o: { gpus?: number; duration?: number; retries?: number } = {}) =>
  submitJob(systemActor, {
    tenant_id: tenantId,
    name,
    gpu_count: o.gpus ?? 1,
    gpu_type: gpuType,
    duration_s: o.duration ?? 2,
    priority: 5,
    max_retries: o.retries ?? 0,
  });

describe("burst in the simulator", () => {
  it("queue → capacity error → provider outage → launch → the agent registers → run → reuse → idle → terminate, billed at our price with the provider's cost", async () => {
    vast.faults.add("launch", { kind: "capacity" });
    lambda.faults.add("launch", { kind: "status", status: 503, body: { error: { code: "global/unknown", message: "upstream" } } });
    const job = await submit("burst-a");
    const ran = await until(
      "the job to complete",
      async () => (await db().job.findUnique({ where: { id: job.id } }))?.status === "completed",
    );
    expect(ran).toBe(true);
    expect(await attemptsOf(job.id)).toEqual(["capacity@vast", "provider_error@lambda", "launched@runpod", "registered@runpod"]);
    // Lambda's outage backed it off; the capacity error did not back Vast off
    expect(await db().providerBackoff.findUnique({ where: { provider: "lambda" } })).toMatchObject({ failures: 1 });
    expect(await db().providerBackoff.findUnique({ where: { provider: "vast" } })).toBeNull();

    const instance = await db().providerInstance.findFirstOrThrow({
      where: { tenantId, provider: "runpod" },
      orderBy: { createdAt: "desc" },
    });
    const placement = await db().jobPlacement.findFirstOrThrow({ where: { jobId: job.id } });
    expect(placement.nodeIds).toEqual([instance.nodeId]);
    const usage = await db().usageEvent.findMany({ where: { jobId: job.id } });
    expect(usage.length).toBeGreaterThan(0);
    for (const u of usage) {
      expect(u).toMatchObject({
        provider: "runpod",
        offerId: instance.offerId,
        centsPerHour: instance.priceCentsPerGpuHour,
        costCentsPerHour: 299,
      });
      expect(Number(u.amountCents)).toBe(Math.round((Number(u.gpuSeconds) * instance.priceCentsPerGpuHour) / 3600));
      expect(Number(u.costCents)).toBe(Math.round((Number(u.gpuSeconds) * 299) / 3600));
    }
    // the timeline says why it burst and where
    const timeline = await db().jobEvent.findMany({ where: { jobId: job.id, actor: "burst" }, orderBy: { id: "asc" } });
    expect(timeline.map((e) => e.reason).join("\n")).toMatch(/launching 1× .* on RunPod \(US-KS-2\) at \$3\.74\/GPU-hour/);

    // a second job while the instance is idle: placed there, no new rental
    const again = await submit("burst-a2");
    await until("the second job to complete", async () => (await db().job.findUnique({ where: { id: again.id } }))?.status === "completed");
    expect(await attemptsOf(again.id)).toEqual(["reused@runpod"]);
    expect((await db().jobPlacement.findFirstOrThrow({ where: { jobId: again.id } })).nodeIds).toEqual([instance.nodeId]);

    // idle past BURST_IDLE_S: terminated at the provider, its key revoked, its node out of service
    const ended = await until("the idle instance to be terminated", async () => {
      const i = await db().providerInstance.findUniqueOrThrow({ where: { id: instance.id } });
      return i.status === "terminated" ? i : null;
    });
    expect(runpod.pods.get(ended.externalId!)?.desiredStatus).toBe("TERMINATED");
    expect((await db().apiKey.findUniqueOrThrow({ where: { id: ended.apiKeyId! } })).revokedAt).not.toBeNull();
    expect((await db().node.findUniqueOrThrow({ where: { id: ended.nodeId! } })).status).toBe("maintenance");
    agents.get(ended.externalId!)?.stop();
  });

  it("an instance that never registers is terminated at the deadline and the job fails over to the next offer", async () => {
    await nothingRented();
    silent.add("vast");
    const job = await submit("burst-b");
    await until("the job to complete", async () => (await db().job.findUnique({ where: { id: job.id } }))?.status === "completed", 60_000);
    const attempts = await attemptsOf(job.id);
    expect(attempts.slice(0, 2)).toEqual(["launched@vast", "never_registered@vast"]);
    // Lambda is still backed off; RunPod is next
    expect(attempts.slice(2)).toEqual(["launched@runpod", "registered@runpod"]);
    const first = await db().burstAttempt.findFirstOrThrow({ where: { jobId: job.id, outcome: "never_registered" } });
    const silentOne = await db().providerInstance.findUniqueOrThrow({ where: { id: first.instanceId! } });
    expect(silentOne.status).toBe("terminated");
    expect(vast.instances.get(Number(silentOne.externalId))?.destroyed).toBe(true);
    expect(await db().alertEvent.count({ where: { ruleType: "burst_failed", dedupeKey: `burst_failed:instance:${silentOne.id}` } })).toBe(
      1,
    );
  });

  it("an interrupted instance puts the job back in the queue, its retries untouched, and it runs on the next offer", async () => {
    await nothingRented();
    const job = await submit("burst-c", { duration: 4, retries: 1 });
    const first = await until("the job to run on provider capacity", async () => {
      const j = await db().job.findUniqueOrThrow({ where: { id: job.id } });
      if (j.status !== "running") return null;
      return db().providerInstance.findFirst({ where: { jobId: job.id, status: "running" } });
    });
    // the cheapest for a job with retries is interruptible capacity (RunPod's spot at $2.19)
    expect(first).toMatchObject({ provider: "runpod", interruptible: true, priceCentsPerGpuHour: 219 });
    runpod.interrupt(first.externalId!);
    agents.get(first.externalId!)?.stop();
    await until(
      "the job to complete elsewhere",
      async () => (await db().job.findUnique({ where: { id: job.id } }))?.status === "completed",
      60_000,
    );
    const attempts = await attemptsOf(job.id);
    expect(attempts.slice(0, 3)).toEqual(["launched@runpod", "registered@runpod", "interrupted@runpod"]);
    expect(attempts.slice(3)).toContain("registered@vast");
    const j = await db().job.findUniqueOrThrow({ where: { id: job.id } });
    expect(j.failures).toBe(0);
    expect(j.attempts).toBe(2);
    expect((await db().providerInstance.findUniqueOrThrow({ where: { id: first.id } })).status).toBe("terminated");
    // both runs billed on provider capacity, each at its instance's price
    const usage = await db().usageEvent.findMany({ where: { jobId: job.id }, orderBy: { startedAt: "asc" } });
    expect(new Set(usage.map((u) => u.provider))).toEqual(new Set(["runpod", "vast"]));
  });

  it("the spend cap stops new launches and raises an alert; the job keeps waiting for local capacity", async () => {
    // 8 GPUs × $3.74 = $29.92 for the first hour, over the $25 hourly cap
    const job = await submit("burst-d", { gpus: 8 });
    await until("the cap to be recorded", async () => (await attemptsOf(job.id)).includes("cap_reached"));
    expect(await db().providerInstance.count({ where: { jobId: job.id } })).toBe(0);
    const alert = await db().alertEvent.findFirstOrThrow({ where: { ruleType: "burst_spend_cap", subjectId: tenantId, status: "firing" } });
    expect(alert.message).toMatch(/hourly burst spend cap/);
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("queued");
    await cancelJob(systemActor, job.id);
  });

  it("the reconciler terminates an instance of ours that nothing owns, with an alert", async () => {
    // a launch whose answer was lost: the provider runs gpuforge-<id> for a row that ended
    const row = await db()
      .providerInstance.findFirstOrThrow({ where: { status: "terminated", provider: "lambda" } })
      .catch(() => null);
    const ghostId = row?.id ?? (await db().providerInstance.findFirstOrThrow({ where: { status: "terminated" } })).id;
    const offer = await db().providerOffer.findFirstOrThrow({ where: { provider: "lambda" } });
    const res = await fetch(`${lambda.url}/instance-operations/launch`, {
      method: "POST",
      headers: { authorization: `Bearer ${lambda.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        region_name: offer.region,
        instance_type_name: offer.offerId.split("@")[0],
        ssh_key_names: ["gpuforge"],
        quantity: 1,
        name: `gpuforge-${ghostId}`,
        user_data: "",
      }),
    });
    const ghost = ((await res.json()) as { data: { instance_ids: string[] } }).data.instance_ids[0]!;
    // beside it, instances of the same account this installation does not own: another
    // installation's (its own id in the name) and an old-style name with no record of ours
    const launchNamed = async (name: string) => {
      const r = await fetch(`${lambda.url}/instance-operations/launch`, {
        method: "POST",
        headers: { authorization: `Bearer ${lambda.key}`, "content-type": "application/json" },
        body: JSON.stringify({
          region_name: offer.region,
          instance_type_name: offer.offerId.split("@")[0],
          ssh_key_names: ["gpuforge"],
          quantity: 1,
          name,
          user_data: "",
        }),
      });
      return ((await r.json()) as { data: { instance_ids: string[] } }).data.instance_ids[0]!;
    };
    const ours = await installationId();
    const theirs = await launchNamed(instanceName(ours === "zzzzother" ? "yyyyother" : "zzzzother", randomUUID()));
    const unknownOld = await launchNamed(`gpuforge-${randomUUID()}`);
    const oursUnowned = await launchNamed(instanceName(ours, randomUUID()));
    const out = await reconcileInstances();
    expect(lambda.instances.get(theirs)?.status).not.toBe("terminated");
    expect(lambda.instances.get(unknownOld)?.status).not.toBe("terminated");
    expect(lambda.instances.get(oursUnowned)?.status).toBe("terminated");
    for (const id of [theirs, unknownOld])
      await fetch(`${lambda.url}/instance-operations/terminate`, {
        method: "POST",
        headers: { authorization: `Bearer ${lambda.key}`, "content-type": "application/json" },
        body: JSON.stringify({ instance_ids: [id] }),
      });
    expect(out.strays).toBeGreaterThanOrEqual(1);
    expect(lambda.instances.get(ghost)?.status).toBe("terminated");
    expect(
      await db().alertEvent.count({ where: { ruleType: "provider_stray_instance", dedupeKey: `provider_stray_instance:lambda:${ghost}` } }),
    ).toBe(1);
    // nothing of ours is left running anywhere once the work is done
    await nothingRented();
    expect([...runpod.live(), ...vast.live(), ...lambda.live()]).toEqual([]);
  });
});
