import "server-only";
import { runOne } from "@/lib/db/statement";
import { lockForTransaction } from "@/lib/db/locks";
import { inTransaction } from "@/lib/db/transaction";
import type { ProviderName } from "@/lib/providers/vocabulary";
import { launchRefusal, type BurstJob, type LaunchRefusal, type PricedOffer } from "./policy";
import { INSERT_LAUNCHING_INSTANCE, LAUNCH_COMMITMENTS } from "./statements";

export type Claim =
  | { outcome: "claimed"; instanceId: string }
  | { outcome: "refused"; refusal: LaunchRefusal }
  /** the job is no longer queued, its tenant no longer bursts, or another cycle rented for it first */
  | { outcome: "stood_down" };

const utcDayStart = (now: number) => new Date(new Date(now).toISOString().slice(0, 10) + "T00:00:00Z");

/**
 * Decides one launch and records it, under the tenant's burst lock and then the provider's: what
 * is committed is counted (spend so far in the window and an hour of every live instance, GPUs
 * rented for the tenant's other waiting jobs, its balance), the offer checked against the caps,
 * the quota and the funds, and the launching row written — all before the locks are let go. So
 * launches of one tenant or one provider, from one cycle or from several at once, are decided one
 * after another, each seeing the ones before it; the provider is asked only after (its answer may
 * take seconds, and a lost answer leaves the row for the reconciler to find).
 */
export async function claimLaunch(
  job: BurstJob & { tenantId: string },
  offer: PricedOffer,
  clusterId: string,
  cfg: { tenantHourlyCapCents: number; tenantDailyCapCents: number; providerDailyCapCents: Record<ProviderName, number> },
): Promise<Claim> {
  return inTransaction(async (c) => {
    await lockForTransaction(c, `burst:tenant:${job.tenantId}`);
    await lockForTransaction(c, `burst:provider:${offer.provider}`);
    const now = Date.now();
    const f = await runOne(c, LAUNCH_COMMITMENTS, [job.tenantId, offer.provider, new Date(now - 3_600_000), utcDayStart(now), job.id]);
    if (!f || f.status !== "active" || !f.burst_enabled || f.job_status !== "queued") return { outcome: "stood_down" };
    const refusal = launchRefusal(
      {
        tenantHourCents: Number(f.tenant_hour_cents),
        tenantDayCents: Number(f.tenant_day_cents),
        providerDayCostCents: Number(f.provider_day_cost_cents),
        tenantLiveHourlyCents: Number(f.tenant_live_hourly_cents),
        rentedWaitingGpus: f.rented_waiting_gpus,
        quota: f.gpu_quota,
        inUse: f.in_use,
        prepaid: f.billing_mode === "prepaid",
        balanceCents: Number(f.balance_cents),
      },
      {
        hourlyCapCents: cfg.tenantHourlyCapCents,
        dailyCapCents: cfg.tenantDailyCapCents,
        providerDailyCapCents: cfg.providerDailyCapCents[offer.provider],
      },
      job,
      offer,
    );
    if (refusal) return { outcome: "refused", refusal };
    const row = await runOne(c, INSERT_LAUNCHING_INSTANCE, [
      offer.provider,
      offer.region,
      offer.offerId,
      offer.providerGpuType,
      offer.gpuType,
      offer.gpuCount,
      offer.interruptible,
      offer.costCentsPerGpuHour,
      offer.priceCentsPerGpuHour,
      clusterId,
      job.tenantId,
      job.id,
    ]);
    return row ? { outcome: "claimed", instanceId: row.id } : { outcome: "stood_down" };
  });
}
