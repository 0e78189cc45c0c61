import "server-only";
import { db } from "@/lib/db/client";
import { markupPctOf } from "@/lib/providers/registry";
import { priceCents } from "@/lib/providers/pricing";
import { oneOf } from "@/lib/vocabulary";
import { PROVIDERS } from "@/lib/providers/vocabulary";
import type { PricedOffer } from "./policy";

/** Cached offers with our price (the markup in force now), mapped ones only unless `unmapped`; cheapest first. */
export async function pricedOffers(
  filter: { gpuType?: string; gpuCount?: number; unmapped?: boolean } = {},
): Promise<Array<PricedOffer & { mapped: boolean }>> {
  const rows = await db().providerOffer.findMany({
    where: {
      ...(filter.gpuType ? { gpuType: filter.gpuType } : filter.unmapped ? {} : { gpuType: { not: null } }),
      ...(filter.gpuCount ? { gpuCount: { gte: filter.gpuCount } } : {}),
    },
    orderBy: [{ costCentsPerGpuHour: "asc" }, { provider: "asc" }, { offerId: "asc" }],
    take: 5_000,
  });
  return rows.map((r) => {
    const provider = oneOf(PROVIDERS, r.provider, "provider_offers.provider");
    return {
      provider,
      offerId: r.offerId,
      providerGpuType: r.providerGpuType,
      gpuType: r.gpuType ?? "",
      mapped: r.gpuType !== null,
      gpuCount: r.gpuCount,
      region: r.region,
      interruptible: r.interruptible,
      costCentsPerGpuHour: r.costCentsPerGpuHour,
      priceCentsPerGpuHour: priceCents(r.costCentsPerGpuHour, markupPctOf(provider)),
      refreshedAt: r.refreshedAt,
    };
  });
}
