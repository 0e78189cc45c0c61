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
 * price, fresh, from an enabled provider not in backoff, not already failed for this job, able to
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
        o.priceCentsPerGpuHour <= f.maxPriceCents &&
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

export interface SpendFacts {
  tenantLastHourCents: number;
  tenantTodayCents: number;
  providerTodayCostCents: number;
  hourlyCapCents: number;
  dailyCapCents: number;
  providerDailyCapCents: number;
}

/**
 * Whether one more hour of the offer fits under the caps: the tenant's spend in the last hour and
 * today (our price) and the provider's cost today, each with the new instance's first hour added.
 * A cap reached stops new launches; running instances are left to finish their work.
 */
export function capReached(
  s: SpendFacts,
  offer: Pick<PricedOffer, "priceCentsPerGpuHour" | "costCentsPerGpuHour" | "gpuCount">,
): string | null {
  const hour = offer.priceCentsPerGpuHour * offer.gpuCount;
  const cost = offer.costCentsPerGpuHour * offer.gpuCount;
  if (s.tenantLastHourCents + hour > s.hourlyCapCents) return `the tenant's hourly burst spend cap (${s.hourlyCapCents} ¢)`;
  if (s.tenantTodayCents + hour > s.dailyCapCents) return `the tenant's daily burst spend cap (${s.dailyCapCents} ¢)`;
  if (s.providerTodayCostCents + cost > s.providerDailyCapCents) return `the provider's daily spend cap (${s.providerDailyCapCents} ¢)`;
  return null;
}
