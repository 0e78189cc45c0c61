import { z } from "zod";
import type { Prisma } from "@/lib/generated/prisma/client";
import { paginationQuery } from "@/lib/http/pagination";
import { oneOf } from "@/lib/vocabulary";

export const TENANT_STATUSES = ["active", "suspended"] as const;
export const BILLING_MODES = ["invoice", "prepaid"] as const;
/** Who made the tenant: an operator, or a stranger through self-service sign-up. */
export const TENANT_ORIGINS = ["operator", "signup"] as const;

const name = z
  .string()
  .trim()
  .min(1, "Name is required")
  .max(100, "At most 100 characters")
  // the database refuses a NUL in text: refused here, naming the field, not a 500
  .regex(/^\P{Cc}*$/u, "No control characters");
const gpuQuota = z.number().int("Must be a whole number").min(0).max(1_000_000);
const billingEmail = z.email("Must be an email address").max(254).toLowerCase();
const maxPriority = z
  .number()
  .int("Must be a whole number")
  .min(1)
  .max(10)
  .meta({ description: "The best priority the tenant's work may use (1 = any; 3 = 3 to 10)" });

// Burst to GPU providers (issue 30): on or off, and the most the tenant pays per GPU-hour there
export const burstSettingsBody = z
  .strictObject({
    enabled: z.boolean(),
    allowed: z.boolean().optional().meta({
      description:
        "Operators only: whether the tenant's admin may turn burst on (an operator turning it on allows it; false turns it off too)",
    }),
    max_price_cents_per_gpu_hour: z
      .number()
      .int("Must be a whole number of cents")
      .min(1, "Must be at least 1 cent")
      .max(1_000_000, "At most 1,000,000 cents ($10,000) per GPU-hour")
      .nullable()
      .optional()
      .meta({ description: "Our price cap per GPU-hour, in cents; required while burst is on (null clears it when off)" }),
  })
  .meta({ id: "BurstSettings", example: { enabled: true, max_price_cents_per_gpu_hour: 450 } });

export const createTenantBody = z
  .strictObject({
    name,
    gpu_quota: gpuQuota,
    billing_email: billingEmail.nullish(),
    billing_mode: z.enum(BILLING_MODES).default("invoice"),
    max_priority: maxPriority.optional(),
  })
  .meta({ id: "CreateTenant", example: { name: "Acme Research", gpu_quota: 64, billing_email: "finance@acme.test" } });

/** What an operator raises a tenant's limits to (null: no limit); self-service sign-ups start with the operator's defaults. */
export const tenantLimitsBody = z
  .strictObject({
    max_pods: z.number({ error: "A whole number or null" }).int("A whole number").min(0).max(10_000).nullable().optional(),
    max_reservation_hours: z
      .number({ error: "A whole number of hours or null" })
      .int("A whole number of hours")
      .min(1)
      .max(366 * 24)
      .nullable()
      .optional(),
    max_reservations: z.number({ error: "A whole number or null" }).int("A whole number").min(0).max(10_000).nullable().optional(),
  })
  .meta({ id: "TenantLimits", description: "null removes a limit; a field left out stays as it is" });

export const updateTenantBody = z
  .strictObject({
    name: name.optional(),
    gpu_quota: gpuQuota.optional(),
    status: z.enum(TENANT_STATUSES).optional(),
    billing_email: billingEmail.nullish(),
    billing_mode: z.enum(BILLING_MODES).optional(),
    max_priority: maxPriority.optional(),
    burst: burstSettingsBody.optional(),
    limits: tenantLimitsBody.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: "Send at least one field to change" })
  .meta({ id: "UpdateTenant", example: { gpu_quota: 128 } });

export const listTenantsQuery = z.strictObject({
  ...paginationQuery,
  status: z.enum(TENANT_STATUSES).optional(),
  origin: z.enum(TENANT_ORIGINS).optional(),
});

export type CreateTenantInput = z.input<typeof createTenantBody>;
export type UpdateTenantInput = z.output<typeof updateTenantBody>;

export const tenantJsonSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    gpu_quota: z.number().int(),
    status: z.enum(TENANT_STATUSES),
    billing_email: z.string().nullable(),
    billing_mode: z.enum(BILLING_MODES),
    max_priority: z.number().int(),
    burst: z.object({ enabled: z.boolean(), allowed: z.boolean(), max_price_cents_per_gpu_hour: z.number().int().nullable() }),
    origin: z.enum(TENANT_ORIGINS),
    /** a self-service sign-up whose address is not verified yet is removed at this time */
    signup_expires_at: z.string().nullable(),
    limits: z.object({
      max_pods: z.number().int().nullable(),
      max_reservation_hours: z.number().int().nullable(),
      max_reservations: z.number().int().nullable(),
    }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "Tenant" });

export const tenantSelect = {
  id: true,
  name: true,
  gpuQuota: true,
  status: true,
  billingEmail: true,
  billingMode: true,
  maxPriority: true,
  burstEnabled: true,
  burstMaxPriceCentsPerGpuHour: true,
  burstAllowed: true,
  origin: true,
  signupExpiresAt: true,
  maxPods: true,
  maxReservationHours: true,
  maxReservations: true,
  createdAt: true,
  updatedAt: true,
} as const;

export type TenantRow = Prisma.TenantGetPayload<{ select: typeof tenantSelect }>;

export function tenantJson(t: TenantRow): z.infer<typeof tenantJsonSchema> {
  return {
    id: t.id,
    name: t.name,
    gpu_quota: t.gpuQuota,
    status: oneOf(TENANT_STATUSES, t.status, "tenants.status"),
    billing_email: t.billingEmail,
    billing_mode: t.billingMode as (typeof BILLING_MODES)[number],
    max_priority: t.maxPriority,
    burst: { enabled: t.burstEnabled, allowed: t.burstAllowed, max_price_cents_per_gpu_hour: t.burstMaxPriceCentsPerGpuHour },
    origin: oneOf(TENANT_ORIGINS, t.origin, "tenants.origin"),
    signup_expires_at: t.signupExpiresAt?.toISOString() ?? null,
    limits: { max_pods: t.maxPods, max_reservation_hours: t.maxReservationHours, max_reservations: t.maxReservations },
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}
