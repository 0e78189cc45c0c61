import "server-only";
import { bundleSigningKey } from "@/lib/agent-install/signing-key";
import { emitEvent } from "@/lib/background/emit";
import { db, pool } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import { inTransaction } from "@/lib/db/transaction";
import { env } from "@/lib/env";
import { logger } from "@/lib/logger";
import { dailyCapCentsOf, enabledProviders, providerAdapter, RUNS_CONTAINERS } from "@/lib/providers/registry";
import { isProviderError } from "@/lib/providers/types";
import { oneOf } from "@/lib/vocabulary";
import { PROVIDERS, type ProviderName } from "@/lib/providers/vocabulary";
import { claimLaunch } from "./claim-launch";
import { launchForJob } from "./launch-instance";
import { offerKey, suitableOffers, type BurstJob } from "./policy";
import { pricedOffers } from "./priced-offers";
import {
  backOff,
  backoffs,
  dollars,
  lastAttemptAt,
  providerCluster,
  providerLabel,
  raiseAlert,
  recordAttempt,
  resolveAlert,
} from "./records";
import { FAILED_OFFERS_OF_JOB, IDLE_INSTANCE_FOR, JOBS_WAITING_TO_BURST, JOINED_INSTANCES, RELEASE_UNNEEDED } from "./statements";
import { terminateInstance } from "./terminate-instance";

const JOBS_PER_CYCLE = 25;
/** offers one job tries in one cycle before it waits for the next (each try is a provider call) */
const TRIES_PER_JOB = 3;
/** quiet outcomes (no offer, cap reached) are written to a job's timeline at most this often */
const QUIET_EVERY_MS = 10 * 60_000;

/**
 * One cycle of the burst policy, beside the scheduler: finish what is ending (terminations the
 * provider has not confirmed), bring joined instances into service, fail over those that never
 * joined or were taken back, release instances whose job ended, terminate the idle, then rent for
 * jobs that have waited longer than BURST_WAIT_S — an idle instance of ours first, else the
 * cheapest suitable offer under the tenant's price and the spend caps.
 */
export async function runBurstCycle() {
  const e = env();
  // an instance installs the same signed bundle every node does: without a key to sign it, nothing launches
  const signing = bundleSigningKey();
  const out = { terminated: 0, joined: 0, failed_over: 0, released: 0, idle_terminated: 0, launched: 0, reused: 0, waiting: 0 };
  for (const i of await db().providerInstance.findMany({ where: { status: "terminating" }, select: { id: true } }))
    if ((await terminateInstance(i.id, "terminating")) === "terminated") out.terminated++;

  // booting → running once the agent registered and heartbeated (its node is available with GPUs)
  for (const j of await run(pool(), JOINED_INSTANCES)) {
    await db().providerInstance.update({
      where: { id: j.id },
      data: { status: "running", registeredAt: new Date() },
    });
    if (j.job_id) {
      const i = await db().providerInstance.findUniqueOrThrow({ where: { id: j.id } });
      await recordAttempt({
        jobId: j.job_id,
        tenantId: i.tenantId,
        outcome: "registered",
        message: `instance joined as node ${j.hostname}; the scheduler places the job there`,
        provider: i.provider as ProviderName,
        offerId: i.offerId,
        region: i.region,
        instanceId: i.id,
        priceCentsPerGpuHour: i.priceCentsPerGpuHour,
      });
    }
    out.joined++;
  }
  if (out.joined) await emitEvent("scheduler/run.requested", { reason: "burst instance joined" });

  out.failed_over += await failOverBooting(e.BURST_REGISTER_DEADLINE_S);
  out.failed_over += await checkRunning();

  out.released = (await run(pool(), RELEASE_UNNEEDED)).length;
  const idleBefore = new Date(Date.now() - e.BURST_IDLE_S * 1000);
  for (const i of await db().providerInstance.findMany({
    where: { status: { in: ["booting", "running"] }, jobId: null, idleSince: { lte: idleBefore } },
    select: { id: true },
  }))
    if ((await terminateInstance(i.id, `idle for more than ${e.BURST_IDLE_S} s`)) === "terminated") out.idle_terminated++;

  const enabled = enabledProviders(e);
  if (enabled.length === 0) return out;
  const waiting = await run(pool(), JOBS_WAITING_TO_BURST, [e.BURST_WAIT_S, JOBS_PER_CYCLE]);
  out.waiting = waiting.length;
  if (waiting.length === 0) return out;
  const offers = await pricedOffers();
  const backoffUntil = await backoffs();
  const caps = {
    tenantHourlyCapCents: e.BURST_TENANT_HOURLY_CAP_CENTS,
    tenantDailyCapCents: e.BURST_TENANT_DAILY_CAP_CENTS,
    providerDailyCapCents: Object.fromEntries(PROVIDERS.map((p) => [p, dailyCapCentsOf(p, e)])) as Record<ProviderName, number>,
  };

  for (const w of waiting) {
    // the query asks for a cap; the database requires one whenever burst is on
    if (w.max_price === null) continue;
    const maxPrice = w.max_price;
    const job: BurstJob & { tenantId: string; waitedS: number } = {
      id: w.id,
      tenantId: w.tenant_id,
      gpuType: w.gpu_type,
      gpuCount: w.gpu_count,
      needsContainers: w.needs_containers,
      maxRetries: w.max_retries,
      waitedS: (Date.now() - w.waiting_since.getTime()) / 1000,
    };
    if (await reuseIdle(job, maxPrice)) {
      out.reused++;
      continue;
    }
    const failed = new Set((await run(pool(), FAILED_OFFERS_OF_JOB, [job.id])).map((f) => offerKey(f.provider, f.offer_id)));
    const candidates = suitableOffers(job, offers, {
      now: Date.now(),
      maxAgeMs: e.PROVIDER_OFFERS_MAX_AGE_S * 1000,
      maxPriceCents: maxPrice,
      backoffUntil,
      failedOffers: failed,
      enabled: new Set(enabled),
      runsContainers: RUNS_CONTAINERS,
    });
    if (candidates.length === 0) {
      await quietAttempt(
        job,
        "no_offer",
        `no offer of ${job.gpuCount}× ${job.gpuType} under ${dollars(maxPrice)}/GPU-hour${job.needsContainers ? " that runs containers" : ""} from a provider that is up; waiting for local capacity or a new offer`,
      );
      continue;
    }
    if (!signing) {
      await quietAttempt(
        job,
        "no_offer",
        "not launched: this control plane has no bundle signing key (BUNDLE_SIGNING_KEY), so an instance could not install the agent; waiting for local capacity",
      );
      continue;
    }
    let tries = 0;
    const skipped = new Set<ProviderName>();
    for (const offer of candidates) {
      if (tries >= TRIES_PER_JOB) break;
      if (skipped.has(offer.provider)) continue;
      // decided and recorded under the tenant's and the provider's burst locks, with what is committed counted
      const clusterId = await providerCluster(offer.provider, offer.region);
      const claim = await claimLaunch(job, offer, clusterId, caps);
      if (claim.outcome === "stood_down") break;
      if (claim.outcome === "refused") {
        if (claim.refusal.kind === "cap") await capAlert(job, claim.refusal.message, offer.provider);
        else await quietAttempt(job, "no_offer", `not launched: ${claim.refusal.message}; waiting`);
        if (claim.refusal.kind !== "cap" || claim.refusal.scope === "tenant") break;
        continue;
      }
      tries++;
      if ((await launchForJob(job, offer, { id: claim.instanceId, clusterId }, signing.publicKey)) === "launched") {
        out.launched++;
        await resolveAlert("burst_spend_cap", `tenant:${job.tenantId}`);
        break;
      }
      // a provider that failed is backed off: skip its other offers for the rest of this cycle
      for (const [p, until] of await backoffs()) backoffUntil.set(p, until);
      if ((backoffUntil.get(offer.provider) ?? 0) > Date.now()) skipped.add(offer.provider);
    }
  }
  return out;
}

/** An idle instance of ours that fits the job is dedicated to it (no new rental, no boot wait). */
async function reuseIdle(job: BurstJob & { tenantId: string }, maxPrice: number): Promise<boolean> {
  const reused = await inTransaction(async (c) => {
    const i = await runOne(c, IDLE_INSTANCE_FOR, [job.gpuType, job.gpuCount, maxPrice, job.needsContainers, job.tenantId]);
    if (!i) return null;
    await c.query(`UPDATE provider_instances SET job_id = $2, idle_since = NULL, tenant_id = $3 WHERE id = $1`, [
      i.id,
      job.id,
      job.tenantId,
    ]);
    return i;
  });
  if (!reused) return false;
  const provider = oneOf(PROVIDERS, reused.provider, "provider_instances.provider");
  await recordAttempt({
    jobId: job.id,
    tenantId: job.tenantId,
    outcome: "reused",
    message: `placed on an idle instance already rented (${providerLabel(provider)}, ${reused.region}) at ${dollars(reused.price_cents_per_gpu_hour)}/GPU-hour`,
    provider,
    offerId: reused.offer_id,
    region: reused.region,
    instanceId: reused.id,
    priceCentsPerGpuHour: reused.price_cents_per_gpu_hour,
  });
  await emitEvent("scheduler/run.requested", { reason: "burst instance reused" });
  return true;
}

async function quietAttempt(job: BurstJob & { tenantId: string }, outcome: "no_offer" | "cap_reached", message: string) {
  const last = await lastAttemptAt(job.id, outcome);
  if (last && Date.now() - last.getTime() < QUIET_EVERY_MS) return;
  await recordAttempt({ jobId: job.id, tenantId: job.tenantId, outcome, message });
}

async function capAlert(job: BurstJob & { tenantId: string }, cap: string, provider: ProviderName) {
  await quietAttempt(job, "cap_reached", `not launched: ${cap} is reached; waiting for local capacity`);
  const tenantCap = cap.startsWith("the tenant");
  const tenant = await db().tenant.findUnique({ where: { id: job.tenantId }, select: { name: true } });
  await raiseAlert({
    type: "burst_spend_cap",
    key: tenantCap ? `tenant:${job.tenantId}` : `provider:${provider}`,
    subjectType: tenantCap ? "tenant" : "provider",
    subjectId: tenantCap ? job.tenantId : provider,
    subjectLabel: tenantCap ? (tenant?.name ?? job.tenantId) : providerLabel(provider),
    tenantId: tenantCap ? job.tenantId : null,
    severity: "warning",
    message: `Burst stopped launching: ${cap} is reached`,
    details: { cap, job_id: job.id, provider },
  });
}

/** Booting instances the provider took back, or whose agent never registered by the deadline: terminated, and the job tries the next offer. */
async function failOverBooting(deadlineS: number): Promise<number> {
  let n = 0;
  const booting = await db().providerInstance.findMany({ where: { status: "booting" } });
  for (const i of booting) {
    const provider = i.provider as ProviderName;
    const late = i.launchedAt && Date.now() - i.launchedAt.getTime() > deadlineS * 1000;
    let gone = false;
    if (!late && (!i.checkedAt || Date.now() - i.checkedAt.getTime() > env().BURST_STATUS_CHECK_S * 1000)) {
      const s = await providerStatus(provider, i.externalId!);
      if (s) {
        await db().providerInstance.update({ where: { id: i.id }, data: { providerStatus: s.providerStatus, checkedAt: new Date() } });
        gone = s.state === "gone" || s.state === "interrupted";
      }
    }
    if (!late && !gone) continue;
    const why = late ? `its agent did not register within ${deadlineS} s` : "the provider ended it before it joined";
    if (i.jobId)
      await recordAttempt({
        jobId: i.jobId,
        tenantId: i.tenantId,
        outcome: late ? "never_registered" : "interrupted",
        message: `${providerLabel(provider)} (${i.region}): ${why}; trying the next offer`,
        provider,
        offerId: i.offerId,
        region: i.region,
        instanceId: i.id,
        priceCentsPerGpuHour: i.priceCentsPerGpuHour,
      });
    if (late)
      await raiseAlert({
        type: "burst_failed",
        key: `instance:${i.id}`,
        subjectType: "provider",
        subjectId: provider,
        subjectLabel: providerLabel(provider),
        tenantId: i.tenantId,
        clusterId: i.clusterId,
        severity: "warning",
        message: `A ${providerLabel(provider)} instance (${i.externalId}) never registered within ${deadlineS} s; it was terminated`,
        details: { instance_id: i.id, external_id: i.externalId, offer_id: i.offerId },
      });
    await terminateInstance(i.id, why);
    n++;
  }
  return n;
}

/** Running instances the provider took back (spot outbid, host failure): their work goes back to the queue and tries again. */
async function checkRunning(): Promise<number> {
  let n = 0;
  const running = await db().providerInstance.findMany({ where: { status: "running" } });
  for (const i of running) {
    const node = i.nodeId ? await db().node.findUnique({ where: { id: i.nodeId }, select: { status: true } }) : null;
    const quiet = !node || node.status === "offline";
    if (!quiet && i.checkedAt && Date.now() - i.checkedAt.getTime() < env().BURST_STATUS_CHECK_S * 1000) continue;
    const provider = i.provider as ProviderName;
    const s = await providerStatus(provider, i.externalId!);
    if (!s) continue;
    await db().providerInstance.update({ where: { id: i.id }, data: { providerStatus: s.providerStatus, checkedAt: new Date() } });
    if (s.state !== "gone" && s.state !== "interrupted") continue;
    if (i.jobId)
      await recordAttempt({
        jobId: i.jobId,
        tenantId: i.tenantId,
        outcome: "interrupted",
        message: `${providerLabel(provider)} (${i.region}) ended the instance (${s.providerStatus}); the job goes back to the queue, its retries untouched, and tries the next offer`,
        provider,
        offerId: i.offerId,
        region: i.region,
        instanceId: i.id,
        priceCentsPerGpuHour: i.priceCentsPerGpuHour,
      });
    await terminateInstance(i.id, `interrupted by the provider (${s.providerStatus})`);
    n++;
  }
  return n;
}

/** The provider's word on one instance; null when it cannot be asked now (backed off, or it failed, which backs it off). */
async function providerStatus(provider: ProviderName, externalId: string) {
  const adapter = providerAdapter(provider);
  if (!adapter) return null;
  try {
    return await adapter.status(externalId);
  } catch (e) {
    if (!isProviderError(e)) throw e;
    logger.warn("provider status check failed", { provider, error: e.message });
    if (e.kind === "unavailable" || e.kind === "rate_limited") await backOff(provider, e.message, e.retryAfterS);
    return null;
  }
}
