import "server-only";
import type { z } from "zod";
import { assertOperator, type Principal } from "@/lib/auth/principal";
import { pricedOffers } from "@/lib/burst/priced-offers";
import { db, pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { getJobOrThrow } from "@/lib/jobs/queries";
import { oneOf } from "@/lib/vocabulary";
import { builtInGpuType } from "./gpu-types";
import { estimateCents } from "./pricing";
import { dailyCapCentsOf, markupPctOf, providerEnabled } from "./registry";
import type {
  attemptJsonSchema,
  gpuMappingJsonSchema,
  instanceJsonSchema,
  jobBurstJsonSchema,
  offerJsonSchema,
  providerJsonSchema,
} from "./schemas";
import { MARGINS_BY_MONTH, PROVIDER_SPEND_SINCE } from "./statements";
import { ATTEMPT_OUTCOMES, INSTANCE_STATUSES, PROVIDERS, type ProviderName } from "./vocabulary";

// What the operator pages and the providers API read. Operators only, except a job's burst facts,
// which its tenant reads too (through the job's own tenant scope).

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const utcDayStart = (now = new Date()) => new Date(now.toISOString().slice(0, 10) + "T00:00:00Z");

export async function listProviders(p: Principal): Promise<Array<z.infer<typeof providerJsonSchema>>> {
  assertOperator(p);
  const [refreshes, counts, backoffs, live, spend] = await Promise.all([
    db().providerRefresh.findMany(),
    db().providerOffer.groupBy({ by: ["provider"], _count: { _all: true } }),
    db().providerBackoff.findMany({ where: { until: { gt: new Date() } } }),
    db().providerInstance.groupBy({
      by: ["provider"],
      where: { status: { in: ["launching", "booting", "running", "terminating"] } },
      _count: { _all: true },
    }),
    run(pool(), PROVIDER_SPEND_SINCE, [utcDayStart()]),
  ]);
  return PROVIDERS.map((name) => {
    const r = refreshes.find((x) => x.provider === name);
    return {
      name,
      enabled: providerEnabled(name),
      offers_refreshed_at: iso(r?.refreshedAt ?? null),
      spend_cents_today: Number(spend.find((s) => s.provider === name)?.cost_cents ?? 0),
      markup_pct: markupPctOf(name),
      offers: counts.find((c) => c.provider === name)?._count._all ?? 0,
      last_error: r?.lastError ?? null,
      backoff_until: iso(backoffs.find((b) => b.provider === name)?.until ?? null),
      live_instances: live.find((l) => l.provider === name)?._count._all ?? 0,
      daily_cap_cents: dailyCapCentsOf(name),
    };
  });
}

export async function listOffers(
  p: Principal,
  filter: { gpu_type?: string; gpu_count?: number; provider?: ProviderName } = {},
): Promise<Array<z.infer<typeof offerJsonSchema>>> {
  assertOperator(p);
  const now = Date.now();
  const offers = await pricedOffers({ gpuType: filter.gpu_type, gpuCount: filter.gpu_count, unmapped: !filter.gpu_type });
  return offers
    .filter((o) => !filter.provider || o.provider === filter.provider)
    .map((o) => ({
      provider: o.provider,
      offer_id: o.offerId,
      provider_gpu_type: o.providerGpuType,
      gpu_type: o.mapped ? o.gpuType : null,
      gpu_count: o.gpuCount,
      region: o.region,
      interruptible: o.interruptible,
      cost_cents_per_gpu_hour: o.costCentsPerGpuHour,
      price_cents_per_gpu_hour: o.priceCentsPerGpuHour,
      refreshed_at: o.refreshedAt.toISOString(),
      age_s: Math.max(0, Math.round((now - o.refreshedAt.getTime()) / 1000)),
    }));
}

/** Every provider GPU name seen in offers or mapped by an operator, with what it maps to and why. */
export async function listGpuMappings(p: Principal): Promise<Array<z.infer<typeof gpuMappingJsonSchema>>> {
  assertOperator(p);
  const [overrides, seen] = await Promise.all([
    db().providerGpuMapping.findMany({ orderBy: [{ provider: "asc" }, { providerGpuType: "asc" }] }),
    db().providerOffer.findMany({ distinct: ["provider", "providerGpuType"], select: { provider: true, providerGpuType: true } }),
  ]);
  const out = new Map<string, z.infer<typeof gpuMappingJsonSchema>>();
  for (const s of seen) {
    const provider = oneOf(PROVIDERS, s.provider, "provider_offers.provider");
    out.set(`${provider}\u0000${s.providerGpuType}`, {
      provider,
      provider_gpu_type: s.providerGpuType,
      gpu_type: builtInGpuType(s.providerGpuType),
      source: "built-in",
      updated_by: null,
    });
  }
  for (const o of overrides) {
    const provider = oneOf(PROVIDERS, o.provider, "provider_gpu_mappings.provider");
    out.set(`${provider}\u0000${o.providerGpuType}`, {
      provider,
      provider_gpu_type: o.providerGpuType,
      gpu_type: o.gpuType,
      source: "operator",
      updated_by: o.updatedBy,
    });
  }
  return [...out.values()].sort((a, b) => a.provider.localeCompare(b.provider) || a.provider_gpu_type.localeCompare(b.provider_gpu_type));
}

type InstanceRow = Awaited<ReturnType<ReturnType<typeof db>["providerInstance"]["findMany"]>>[number];

function instanceJson(i: InstanceRow): z.infer<typeof instanceJsonSchema> {
  return {
    id: i.id,
    provider: oneOf(PROVIDERS, i.provider, "provider_instances.provider"),
    region: i.region,
    offer_id: i.offerId,
    gpu_type: i.gpuType,
    gpu_count: i.gpuCount,
    interruptible: i.interruptible,
    cost_cents_per_gpu_hour: i.costCentsPerGpuHour,
    price_cents_per_gpu_hour: i.priceCentsPerGpuHour,
    status: oneOf(INSTANCE_STATUSES, i.status, "provider_instances.status"),
    cluster_id: i.clusterId,
    node_id: i.nodeId,
    tenant_id: i.tenantId,
    job_id: i.jobId,
    external_id: i.externalId,
    failure: i.failure,
    provider_status: i.providerStatus,
    created_at: i.createdAt.toISOString(),
    launched_at: iso(i.launchedAt),
    registered_at: iso(i.registeredAt),
    idle_since: iso(i.idleSince),
    terminated_at: iso(i.terminatedAt),
  };
}

export async function listProviderInstances(p: Principal, filter: { status?: string; provider?: ProviderName } = {}, limit = 200) {
  assertOperator(p);
  const rows = await db().providerInstance.findMany({
    where: { ...(filter.status ? { status: filter.status } : {}), ...(filter.provider ? { provider: filter.provider } : {}) },
    orderBy: { createdAt: "desc" },
    take: limit,
  });
  return rows.map(instanceJson);
}

/** Revenue, provider cost and margin on provider capacity per month, tenant and provider (since `from`). */
export async function marginsByMonth(p: Principal, from: Date) {
  assertOperator(p);
  return (await run(pool(), MARGINS_BY_MONTH, [from])).map((r) => ({
    month: r.month.toISOString().slice(0, 7),
    tenant_id: r.tenant_id,
    tenant_name: r.tenant_name,
    provider: oneOf(PROVIDERS, r.provider, "usage_events.provider"),
    revenue_cents: Number(r.revenue_cents),
    cost_cents: Number(r.cost_cents),
    margin_cents: Number(r.revenue_cents) - Number(r.cost_cents),
    gpu_hours: Math.round(Number(r.gpu_seconds) / 36) / 100,
  }));
}

/**
 * Why and where a job burst, and what it costs: every attempt, the instance rented for it (the
 * latest), and the estimate — price × GPUs × duration_s before it runs, what its provider runs have
 * cost so far while it runs. The job's tenant reads it too (another tenant's job is not found).
 */
export async function jobBurst(p: Principal, jobId: string): Promise<z.infer<typeof jobBurstJsonSchema>> {
  const job = await getJobOrThrow(p, jobId);
  const attemptInstances = await db().burstAttempt.findMany({ where: { jobId, instanceId: { not: null } }, select: { instanceId: true } });
  const [attempts, instance, usage, lastBilled] = await Promise.all([
    db().burstAttempt.findMany({ where: { jobId }, orderBy: { id: "asc" }, take: 200 }),
    db().providerInstance.findFirst({
      where: { OR: [{ jobId }, { id: { in: attemptInstances.map((a) => a.instanceId!) } }], status: { not: "failed" } },
      orderBy: { createdAt: "desc" },
    }),
    db().usageEvent.aggregate({ where: { jobId, provider: { not: null } }, _sum: { amountCents: true } }),
    db().usageEvent.aggregate({ where: { jobId, attempt: job.attempts }, _max: { endedAt: true } }),
  ]);
  const att: Array<z.infer<typeof attemptJsonSchema>> = attempts.map((a) => ({
    at: a.createdAt.toISOString(),
    outcome: oneOf(ATTEMPT_OUTCOMES, a.outcome, "burst_attempts.outcome"),
    provider: a.provider === null ? null : oneOf(PROVIDERS, a.provider, "burst_attempts.provider"),
    region: a.region,
    offer_id: a.offerId,
    price_cents_per_gpu_hour: a.priceCentsPerGpuHour,
    message: a.message,
  }));
  // before anything is rented: what it would pay if it burst now (the cheapest offer under its cap)
  const quote = instance || job.status !== "queued" ? null : await burstQuote(job);
  const price = instance?.priceCentsPerGpuHour ?? quote?.priceCentsPerGpuHour ?? null;
  return {
    bursting: instance !== null,
    quote: quote
      ? { provider: quote.provider, region: quote.region, price_cents_per_gpu_hour: quote.priceCentsPerGpuHour, after_s: quote.afterS }
      : null,
    attempts: att,
    instance: instance
      ? {
          provider: oneOf(PROVIDERS, instance.provider, "provider_instances.provider"),
          region: instance.region,
          status: oneOf(INSTANCE_STATUSES, instance.status, "provider_instances.status"),
          gpu_count: instance.gpuCount,
          price_cents_per_gpu_hour: instance.priceCentsPerGpuHour,
          node_id: p.kind === "operator" ? instance.nodeId : null,
        }
      : null,
    estimate:
      price === null
        ? null
        : {
            price_cents_per_gpu_hour: price,
            estimated_total_cents: job.durationS ? estimateCents(price, job.gpuCount, job.durationS) : null,
            cost_so_far_cents: Number(usage._sum.amountCents ?? 0) + unmetered(job, price, lastBilled._max.endedAt),
          },
  };
}

/** The cheapest fresh offer a waiting job of a bursting tenant would take (no containers check: a quote, not a launch). */
async function burstQuote(job: { tenantId: string; gpuType: string; gpuCount: number; submittedAt: Date }) {
  const t = await db().tenant.findUnique({
    where: { id: job.tenantId },
    select: { burstEnabled: true, burstMaxPriceCentsPerGpuHour: true },
  });
  if (!t?.burstEnabled || t.burstMaxPriceCentsPerGpuHour === null) return null;
  const maxAge = env().PROVIDER_OFFERS_MAX_AGE_S * 1000;
  const cap = t.burstMaxPriceCentsPerGpuHour;
  const best = (await pricedOffers({ gpuType: job.gpuType, gpuCount: job.gpuCount }))
    .filter((o) => providerEnabled(o.provider) && o.priceCentsPerGpuHour <= cap && Date.now() - o.refreshedAt.getTime() <= maxAge)
    .sort((a, b) => a.priceCentsPerGpuHour * a.gpuCount - b.priceCentsPerGpuHour * b.gpuCount)[0];
  if (!best) return null;
  return { ...best, afterS: Math.max(0, Math.round(env().BURST_WAIT_S - (Date.now() - job.submittedAt.getTime()) / 1000)) };
}

/** The part of a running attempt the meter has not billed yet (it bills running work every minute or hour). */
function unmetered(job: { status: string; startedAt: Date | null; gpuCount: number }, price: number, billedTo: Date | null): number {
  if (job.status !== "running" || !job.startedAt) return 0;
  const from = Math.max(job.startedAt.getTime(), billedTo?.getTime() ?? 0);
  return estimateCents(price, job.gpuCount, (Date.now() - from) / 1000);
}

export const burstSettings = () => {
  const e = env();
  return {
    wait_s: e.BURST_WAIT_S,
    idle_s: e.BURST_IDLE_S,
    register_deadline_s: e.BURST_REGISTER_DEADLINE_S,
    tenant_hourly_cap_cents: e.BURST_TENANT_HOURLY_CAP_CENTS,
    tenant_daily_cap_cents: e.BURST_TENANT_DAILY_CAP_CENTS,
    default_markup_pct: e.PROVIDER_MARKUP_PCT,
  };
};
