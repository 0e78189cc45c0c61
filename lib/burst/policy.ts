import type { ProviderName } from "@/lib/providers/vocabulary";

// When to rent, which offer, when to let go: the burst policy's decisions, pure. The background
// cycle (lib/burst/run-burst.ts) reads the facts, asks these functions and carries out the answers.

export interface PricedOffer {
  provider: ProviderName;
  offerId: string;
  providerGpuType: string;
  gpuType: string;
  gpuCount: number;
  region: string;
  interruptible: boolean;
  costCentsPerGpuHour: number;
  priceCentsPerGpuHour: number;
  refreshedAt: Date;
}

export interface BurstJob {
  id: string;
  gpuType: string;
  gpuCount: number;
  /** the job runs an image or a command: only providers whose instances run containers can take it */
  needsContainers: boolean;
  /** a job with retries left may go to interruptible capacity (an interruption spends none of them) */
  maxRetries: number;
}

export interface OfferFilter {
  now: number;
  maxAgeMs: number;
  /** the tenant's price cap per GPU-hour (our price) */
  maxPriceCents: number;
  /** providers left alone until then */
  backoffUntil: ReadonlyMap<ProviderName, number>;
  /** offers this job already failed on (capacity, never registered, interrupted) */
  failedOffers: ReadonlySet<string>;
  enabled: ReadonlySet<ProviderName>;
  runsContainers: Readonly<Record<ProviderName, boolean>>;
}

export const offerKey = (provider: string, offerId: string) => `${provider}\u0000${offerId}`;

/**
 * The offers that can take the job, best first: our GPU type, enough GPUs, within the tenant's
 * price per GPU of the job (the job pays for every GPU of the instance), fresh, from an enabled provider not in backoff, not already failed for this job, able to
 * run containers when the job needs them, interruptible only when the job can be retried. Ordered
 * by what the job would pay per hour (price × the offer's GPUs: a bigger machine costs more even
 * at the same rate), then on-demand before interruptible, then the cheaper cost.
 */
export function suitableOffers(job: BurstJob, offers: readonly PricedOffer[], f: OfferFilter): PricedOffer[] {
  return offers
    .filter(
      (o) =>
        o.gpuType === job.gpuType &&
        o.gpuCount >= job.gpuCount &&
        // the job pays the whole instance (every GPU it has): per GPU of the job, within the tenant's price
        o.priceCentsPerGpuHour * o.gpuCount <= f.maxPriceCents * job.gpuCount &&
        f.now - o.refreshedAt.getTime() <= f.maxAgeMs &&
        f.enabled.has(o.provider) &&
        (f.backoffUntil.get(o.provider) ?? 0) <= f.now &&
        !f.failedOffers.has(offerKey(o.provider, o.offerId)) &&
        (!job.needsContainers || f.runsContainers[o.provider]) &&
        (!o.interruptible || job.maxRetries > 0),
    )
    .sort(
      (a, b) =>
        a.priceCentsPerGpuHour * a.gpuCount - b.priceCentsPerGpuHour * b.gpuCount ||
        Number(a.interruptible) - Number(b.interruptible) ||
        a.costCentsPerGpuHour - b.costCentsPerGpuHour ||
        a.offerId.localeCompare(b.offerId),
    );
}

/** How long a provider is left alone after `failures` failures in a row: base doubling to max, or what it asked (Retry-After) if longer. */
export function backoffSeconds(failures: number, baseS: number, maxS: number, retryAfterS?: number): number {
  const doubling = Math.min(maxS, baseS * 2 ** Math.max(0, Math.min(failures - 1, 30)));
  return Math.max(doubling, Math.min(retryAfterS ?? 0, maxS));
}

/**
 * What renting more would commit a tenant and a provider to, read under their burst locks
 * (lib/burst/claim-launch.ts): spend in the window so far plus one more hour of every live instance.
 */
export interface Commitments {
  /** the tenant's spend in the last hour (our price) + one more hour of each of its live instances */
  tenantHourCents: number;
  /** the same since the start of the day (UTC) */
  tenantDayCents: number;
  /** the provider's cost today + one more hour of each of its live instances */
  providerDayCostCents: number;
  /** what the tenant's live instances cost an hour (our price) */
  tenantLiveHourlyCents: number;
  /** GPUs of the tenant's other waiting jobs that already have an instance rented for them */
  rentedWaitingGpus: number;
  quota: number;
  inUse: number;
  prepaid: boolean;
  balanceCents: number;
}

export interface SpendCaps {
  hourlyCapCents: number;
  dailyCapCents: number;
  providerDailyCapCents: number;
}

export type LaunchRefusal =
  { kind: "quota"; message: string } | { kind: "funds"; message: string } | { kind: "cap"; scope: "tenant" | "provider"; message: string };

/**
 * Whether renting the offer for the job may go ahead (null) or why not, with what is already
 * committed counted — the checks the scheduler applies before it places work, applied before
 * money is spent: the job's GPUs must fit the quota beside what the tenant holds and the GPUs
 * rented for its other waiting jobs; a prepaid tenant's balance must cover the instance's first
 * hour beside the next hour of what it already rents; and one more hour of the instance must fit
 * under each spend cap beside everything committed (spend so far and an hour of every live instance).
 */
export function launchRefusal(
  c: Commitments,
  caps: SpendCaps,
  job: { gpuCount: number },
  offer: Pick<PricedOffer, "priceCentsPerGpuHour" | "costCentsPerGpuHour" | "gpuCount">,
): LaunchRefusal | null {
  const held = c.inUse + c.rentedWaitingGpus;
  if (held + job.gpuCount > c.quota)
    return {
      kind: "quota",
      message: `its ${job.gpuCount} GPUs do not fit the quota of ${c.quota}: ${c.inUse} are in use and ${c.rentedWaitingGpus} are rented for other waiting jobs`,
    };
  const hour = offer.priceCentsPerGpuHour * offer.gpuCount;
  const cost = offer.costCentsPerGpuHour * offer.gpuCount;
  if (c.prepaid && c.balanceCents < c.tenantLiveHourlyCents + hour)
    return {
      kind: "funds",
      message: `the prepaid balance (${cents(c.balanceCents)}) does not cover this instance's first hour (${cents(hour)})${c.tenantLiveHourlyCents ? ` beside the next hour of what is already rented (${cents(c.tenantLiveHourlyCents)})` : ""}`,
    };
  if (c.tenantHourCents + hour > caps.hourlyCapCents)
    return { kind: "cap", scope: "tenant", message: `the tenant's hourly burst spend cap (${caps.hourlyCapCents} ¢)` };
  if (c.tenantDayCents + hour > caps.dailyCapCents)
    return { kind: "cap", scope: "tenant", message: `the tenant's daily burst spend cap (${caps.dailyCapCents} ¢)` };
  if (c.providerDayCostCents + cost > caps.providerDailyCapCents)
    return { kind: "cap", scope: "provider", message: `the provider's daily spend cap (${caps.providerDailyCapCents} ¢)` };
  return null;
}

const cents = (n: number) => `$${(n / 100).toFixed(2)}`;
