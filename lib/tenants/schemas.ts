import { z } from "zod";
import type { Prisma } from "@/lib/generated/prisma/client";
import { paginationQuery } from "@/lib/http/pagination";
import { oneOf } from "@/lib/vocabulary";

export const TENANT_STATUSES = ["active", "suspended"] as const;
export const BILLING_MODES = ["invoice", "prepaid"] as const;
/** Who made the tenant: an operator, or a stranger through self-service sign-up. */
export const TENANT_ORIGINS = ["operator", "signup"] as const;

const name = z.string().trim().min(1, "Name is required").max(100, "At most 100 characters");
const gpuQuota = z.number().int("Must be a whole number").min(0).max(1_000_000);
const billingEmail = z.email("Must be an email address").max(254).toLowerCase();
const maxPriority = z
  .number()
  .int("Must be a whole number")
  .min(1)
  .max(10)
  .meta({ description: "The best priority the tenant's work may use (1 = any; 3 = 3 to 10)" });

export const createTenantBody = z
  .strictObject({
    name,
    gpu_quota: gpuQuota,
    billing_email: billingEmail.nullish(),
    billing_mode: z.enum(BILLING_MODES).default("invoice"),
    max_priority: maxPriority.optional(),
  })
  .meta({ id: "CreateTenant", example: { name: "Acme Research", gpu_quota: 64, billing_email: "finance@acme.test" } });

export const updateTenantBody = z
  .strictObject({
    name: name.optional(),
    gpu_quota: gpuQuota.optional(),
    status: z.enum(TENANT_STATUSES).optional(),
    billing_email: billingEmail.nullish(),
    billing_mode: z.enum(BILLING_MODES).optional(),
    max_priority: maxPriority.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: "Send at least one field to change" })
  .meta({ id: "UpdateTenant", example: { gpu_quota: 128 } });

export const listTenantsQuery = z.strictObject({ ...paginationQuery, status: z.enum(TENANT_STATUSES).optional() });

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
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}
