import { z } from "zod";
import { ATTEMPT_OUTCOMES, INSTANCE_STATUSES, PROVIDERS } from "./vocabulary";

// The providers API's shapes (zod), reused by the contracts, the OpenAPI document and the pages.

const GPU_TYPE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const gpuType = z.string().trim().regex(GPU_TYPE, "A GPU type: letters, digits, dot, dash, underscore (at most 64)");

export const providerJsonSchema = z
  .object({
    name: z.enum(PROVIDERS),
    enabled: z.boolean(),
    offers_refreshed_at: z.string().nullable(),
    spend_cents_today: z.number().int(),
    markup_pct: z.number(),
    offers: z.number().int(),
    last_error: z.string().nullable(),
    backoff_until: z.string().nullable(),
    live_instances: z.number().int(),
    daily_cap_cents: z.number().int(),
  })
  .meta({ id: "Provider" });

export const listOffersQuery = z.strictObject({
  gpu_type: gpuType.optional(),
  gpu_count: z.coerce.number().int("Must be a whole number").min(1).max(64).optional(),
  provider: z.enum(PROVIDERS).optional(),
});

export const offerJsonSchema = z
  .object({
    provider: z.enum(PROVIDERS),
    offer_id: z.string(),
    provider_gpu_type: z.string(),
    gpu_type: z.string().nullable().meta({ description: "Ours, through the mapping; null: unmapped (never launched)" }),
    gpu_count: z.number().int(),
    region: z.string(),
    interruptible: z.boolean(),
    cost_cents_per_gpu_hour: z.number().int(),
    price_cents_per_gpu_hour: z.number().int().meta({ description: "cost × (1 + markup), half up to a cent" }),
    refreshed_at: z.string(),
    age_s: z.number().int(),
  })
  .meta({ id: "ProviderOffer" });

export const gpuMappingBody = z
  .strictObject({
    provider: z.enum(PROVIDERS),
    provider_gpu_type: z.string().trim().min(1, "Required").max(200, "At most 200 characters"),
    gpu_type: gpuType.nullable().meta({ description: "Our GPU type; null: never use this provider GPU" }),
  })
  .meta({ id: "ProviderGpuMapping", example: { provider: "vast", provider_gpu_type: "H100 SXM", gpu_type: "H100" } });

export const gpuMappingJsonSchema = z.object({
  provider: z.enum(PROVIDERS),
  provider_gpu_type: z.string(),
  gpu_type: z.string().nullable(),
  source: z.enum(["operator", "built-in"]),
  updated_by: z.string().nullable(),
});

export const deleteGpuMappingQuery = z.strictObject({
  provider: z.enum(PROVIDERS),
  provider_gpu_type: z.string().trim().min(1, "Required").max(200),
});

export const instanceJsonSchema = z
  .object({
    id: z.string(),
    provider: z.enum(PROVIDERS),
    region: z.string(),
    offer_id: z.string(),
    gpu_type: z.string(),
    gpu_count: z.number().int(),
    interruptible: z.boolean(),
    cost_cents_per_gpu_hour: z.number().int(),
    price_cents_per_gpu_hour: z.number().int(),
    status: z.enum(INSTANCE_STATUSES),
    cluster_id: z.string(),
    node_id: z.string().nullable(),
    tenant_id: z.string(),
    job_id: z.string().nullable(),
    external_id: z.string().nullable(),
    failure: z.string().nullable(),
    provider_status: z.string().nullable(),
    created_at: z.string(),
    launched_at: z.string().nullable(),
    registered_at: z.string().nullable(),
    idle_since: z.string().nullable(),
    terminated_at: z.string().nullable(),
  })
  .meta({ id: "ProviderInstance" });

export const listInstancesQuery = z.strictObject({
  status: z.enum(INSTANCE_STATUSES).optional(),
  provider: z.enum(PROVIDERS).optional(),
});

export const attemptJsonSchema = z.object({
  at: z.string(),
  outcome: z.enum(ATTEMPT_OUTCOMES),
  provider: z.enum(PROVIDERS).nullable(),
  region: z.string().nullable(),
  offer_id: z.string().nullable(),
  price_cents_per_gpu_hour: z.number().int().nullable(),
  message: z.string(),
});

export const jobBurstJsonSchema = z
  .object({
    bursting: z.boolean().meta({ description: "the job has (or had) provider capacity rented for it" }),
    quote: z
      .object({
        provider: z.enum(PROVIDERS),
        region: z.string(),
        price_cents_per_gpu_hour: z.number().int(),
        after_s: z.number().int().meta({ description: "seconds until it has waited beyond the burst threshold (0: it may burst now)" }),
      })
      .nullable()
      .meta({ description: "before anything is rented: the cheapest offer it would take if it burst, under its tenant's cap" }),
    attempts: z.array(attemptJsonSchema),
    instance: z
      .object({
        provider: z.enum(PROVIDERS),
        region: z.string(),
        status: z.enum(INSTANCE_STATUSES),
        gpu_count: z.number().int(),
        price_cents_per_gpu_hour: z.number().int(),
        node_id: z.string().nullable(),
      })
      .nullable(),
    estimate: z
      .object({
        price_cents_per_gpu_hour: z.number().int(),
        estimated_total_cents: z.number().int().nullable().meta({ description: "price × GPUs × duration_s, when the job declares one" }),
        cost_so_far_cents: z.number().int().meta({ description: "what its runs on provider capacity have cost it so far, at our price" }),
      })
      .nullable(),
  })
  .meta({ id: "JobBurst" });
