import { columnSet } from "@/lib/db/column-set";
import { statement } from "@/lib/db/statement";

// The providers' set-based statements (offers, spend), declared (lib/db/statement.ts).

export const OFFER_ROWS = columnSet({
  offer_id: "text[]",
  provider_gpu_type: "text[]",
  gpu_type: "text[]",
  gpu_count: "int[]",
  region: "text[]",
  interruptible: "boolean[]",
  cost: "int[]",
});

/**
 * One provider's offers replaced by the refresh's, in one statement ($1 provider, $2 time, then the
 * rows): each upserted, then the provider's offers the refresh did not name removed. (A DELETE and
 * an INSERT of the same keys cannot share a statement: both see the snapshot before either.)
 */
export const REPLACE_OFFERS = statement("providers.replace-offers", {
  params: ["text", "timestamptz", "text[]", "text[]", "text[]", "int4[]", "text[]", "bool[]", "int4[]"],
  columns: { offers: "int4" },
  text: `WITH fresh AS (
          INSERT INTO provider_offers (provider, offer_id, provider_gpu_type, gpu_type, gpu_count, region, interruptible, cost_cents_per_gpu_hour, refreshed_at)
          SELECT DISTINCT ON (x.offer_id) $1, x.offer_id, x.provider_gpu_type, x.gpu_type, x.gpu_count, x.region, x.interruptible, x.cost, $2
            FROM ${OFFER_ROWS.sql(3)}
          ON CONFLICT (provider, offer_id) DO UPDATE SET provider_gpu_type = EXCLUDED.provider_gpu_type, gpu_type = EXCLUDED.gpu_type,
            gpu_count = EXCLUDED.gpu_count, region = EXCLUDED.region, interruptible = EXCLUDED.interruptible,
            cost_cents_per_gpu_hour = EXCLUDED.cost_cents_per_gpu_hour, refreshed_at = EXCLUDED.refreshed_at
          RETURNING offer_id),
        gone AS (DELETE FROM provider_offers o WHERE o.provider = $1 AND NOT EXISTS (SELECT 1 FROM fresh f WHERE f.offer_id = o.offer_id))
        SELECT count(*)::int AS offers FROM fresh`,
});

/** The naive refresh the benchmark compares with: one upsert per offer. */
export const UPSERT_ONE_OFFER = statement("providers.upsert-one-offer", {
  params: ["text", "text", "text", "text?", "int4", "text", "bool", "int4", "timestamptz"],
  columns: {},
  text: `INSERT INTO provider_offers (provider, offer_id, provider_gpu_type, gpu_type, gpu_count, region, interruptible, cost_cents_per_gpu_hour, refreshed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (provider, offer_id) DO UPDATE SET provider_gpu_type = EXCLUDED.provider_gpu_type, gpu_type = EXCLUDED.gpu_type,
           gpu_count = EXCLUDED.gpu_count, region = EXCLUDED.region, interruptible = EXCLUDED.interruptible,
           cost_cents_per_gpu_hour = EXCLUDED.cost_cents_per_gpu_hour, refreshed_at = EXCLUDED.refreshed_at`,
});

export const RECORD_REFRESH = statement("providers.record-refresh", {
  params: ["text", "timestamptz", "int4?", "text?"],
  columns: {},
  text: `INSERT INTO provider_refreshes (provider, refreshed_at, attempted_at, offers, last_error)
         VALUES ($1, CASE WHEN $4::text IS NULL THEN $2::timestamptz END, $2, COALESCE($3, 0), $4)
         ON CONFLICT (provider) DO UPDATE SET attempted_at = EXCLUDED.attempted_at, last_error = EXCLUDED.last_error,
           refreshed_at = COALESCE(EXCLUDED.refreshed_at, provider_refreshes.refreshed_at),
           offers = CASE WHEN EXCLUDED.last_error IS NULL THEN EXCLUDED.offers ELSE provider_refreshes.offers END`,
});

/**
 * What each provider's instances have cost since $1 (its charge per GPU-hour × GPUs × the time each
 * ran inside the window, launch to termination or now).
 */
export const PROVIDER_SPEND_SINCE = statement("providers.spend-since", {
  params: ["timestamptz"],
  columns: { provider: "text", cost_cents: "int8", price_cents: "int8", live: "int4" },
  text: `SELECT i.provider,
                round(sum(i.cost_cents_per_gpu_hour * i.gpu_count * extract(epoch FROM LEAST(COALESCE(i.terminated_at, now()), now()) - GREATEST(i.launched_at, $1)) / 3600))::bigint AS cost_cents,
                round(sum(i.price_cents_per_gpu_hour * i.gpu_count * extract(epoch FROM LEAST(COALESCE(i.terminated_at, now()), now()) - GREATEST(i.launched_at, $1)) / 3600))::bigint AS price_cents,
                count(*) FILTER (WHERE i.status IN ('booting', 'running', 'terminating'))::int AS live
           FROM provider_instances i
          WHERE i.launched_at IS NOT NULL AND COALESCE(i.terminated_at, now()) > $1
          GROUP BY i.provider`,
});

/** Revenue (our price) and provider cost of usage on provider capacity, per tenant, provider and month. */
export const MARGINS_BY_MONTH = statement("providers.margins-by-month", {
  params: ["timestamptz"],
  columns: {
    month: "timestamptz",
    tenant_id: "text",
    tenant_name: "text",
    provider: "text",
    revenue_cents: "int8",
    cost_cents: "int8",
    gpu_seconds: "int8",
  },
  text: `SELECT date_trunc('month', u.ended_at) AS month, u.tenant_id::text, t.name AS tenant_name, u.provider,
                sum(u.amount_cents)::bigint AS revenue_cents, sum(u.cost_cents)::bigint AS cost_cents, sum(u.gpu_seconds)::bigint AS gpu_seconds
           FROM usage_events u JOIN tenants t ON t.id = u.tenant_id
          WHERE u.provider IS NOT NULL AND u.ended_at >= $1
          GROUP BY 1, 2, 3, 4 ORDER BY 1 DESC, 5 DESC`,
});
