import "server-only";
import { db, pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { logger } from "@/lib/logger";
import { mapGpuType } from "./gpu-types";
import { enabledProviders, providerAdapter } from "./registry";
import { OFFER_ROWS, RECORD_REFRESH, REPLACE_OFFERS } from "./statements";
import { offerProblem, type ProviderAdapter, type ProviderOffer } from "./types";
import type { ProviderName } from "./vocabulary";

/** The operator's GPU-type mapping of one provider (provider name → ours, or null: never). */
async function gpuTypeOverrides(provider: ProviderName): Promise<Map<string, string | null>> {
  const rows = await db().providerGpuMapping.findMany({ where: { provider }, select: { providerGpuType: true, gpuType: true } });
  return new Map(rows.map((r) => [r.providerGpuType, r.gpuType]));
}

/**
 * Refreshes one provider's offers: asks it for them, maps their GPU types (the operator's mapping
 * over the built-in one) and replaces the cached ones in one statement. A refresh that fails keeps
 * the offers it had (shown with their age; launches skip offers older than PROVIDER_OFFERS_MAX_AGE_S)
 * and records why. An offer that cannot be kept (a field missing, of the wrong type or out of
 * range) is skipped and logged; the others are stored. Nothing here throws for what a provider said.
 */
export async function refreshProviderOffers(provider: ProviderName, adapter: ProviderAdapter | null = providerAdapter(provider)) {
  const at = new Date();
  if (!adapter) return { provider, offers: 0, error: "not configured" };
  let offers: ProviderOffer[];
  try {
    offers = await adapter.listOffers();
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    logger.warn("provider offers could not be refreshed", { provider, error });
    await run(pool(), RECORD_REFRESH, [provider, at, null, error]);
    return { provider, offers: 0, error };
  }
  const kept: ProviderOffer[] = [];
  const skipped: string[] = [];
  for (const o of Array.isArray(offers) ? offers : []) {
    const why = offerProblem(o);
    if (why) skipped.push(why);
    else kept.push(o);
  }
  if (skipped.length) logger.warn("provider offers skipped", { provider, skipped: skipped.length, first: skipped.slice(0, 3) });
  const overrides = await gpuTypeOverrides(provider);
  const bound = OFFER_ROWS.bindRows(
    kept,
    {
      offer_id: (o) => o.offerId,
      provider_gpu_type: (o) => o.providerGpuType,
      gpu_type: (o) => mapGpuType(o.providerGpuType, overrides),
      gpu_count: (o) => o.gpuCount,
      region: (o) => o.region,
      interruptible: (o) => o.interruptible,
      cost: (o) => o.costCentsPerGpuHour,
    },
    3,
  );
  const c = await pool().connect();
  try {
    await c.query("BEGIN");
    // a column set's arrays go in as they are (lib/reservations/hold-nodes.ts does the same)
    const { rows } = await c.query<{ offers: number }>(REPLACE_OFFERS.text, [provider, at, ...bound.values]);
    const count = rows[0]?.offers ?? 0;
    await run(c, RECORD_REFRESH, [provider, at, count, null]);
    await c.query("COMMIT");
    return { provider, offers: count, ...(skipped.length ? { skipped: skipped.length } : {}) };
  } catch (e) {
    await c.query("ROLLBACK").catch(() => {});
    const error = `the offers could not be stored: ${e instanceof Error ? e.message : String(e)}`.slice(0, 500);
    logger.error("provider offers could not be stored", { provider, error });
    await run(pool(), RECORD_REFRESH, [provider, at, null, error]);
    return { provider, offers: 0, error };
  } finally {
    c.release();
  }
}

/** Every enabled provider's offers, one after the other (the background job's run). */
export async function refreshAllOffers() {
  const results = [];
  for (const p of enabledProviders()) results.push(await refreshProviderOffers(p));
  return {
    providers: results.length,
    offers: results.reduce((n, r) => n + r.offers, 0),
    failed: results.filter((r) => r.error).map((r) => r.provider),
  };
}
