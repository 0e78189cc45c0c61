import { z } from "zod";
import { USER_ROLES } from "@/lib/users/schemas";

// Service accounts as the API takes and shows them: the explicit owner of keys that must outlive a
// person (a CI system, a fleet's node agents, a partner's integration). An admin creates one, sees
// it with its keys, and disables it; its keys carry no more than its role and die with it.

export const SERVICE_ACCOUNT_ROLES = USER_ROLES;

export const createServiceAccountBody = z
  .strictObject({
    name: z.string().trim().min(1, "Name is required").max(100, "At most 100 characters"),
    role: z.enum(SERVICE_ACCOUNT_ROLES).meta({
      description: "What its keys may do at most: operator (platform accounts, no tenant), or tenant_admin / tenant_member of its tenant",
    }),
    tenant_id: z
      .uuid("Must be a tenant id")
      .optional()
      .meta({ description: "Operators: the tenant a tenant_admin or tenant_member account belongs to" }),
    description: z.string().trim().max(500, "At most 500 characters").optional(),
  })
  .meta({ id: "CreateServiceAccount", example: { name: "ci-deployer", role: "tenant_admin", description: "Deploys endpoints from CI" } });

export const listServiceAccountsQuery = z.strictObject({
  tenant_id: z.uuid().optional(),
  include_disabled: z.enum(["true", "false"]).optional(),
});

export const serviceAccountJsonSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string().nullable(),
    name: z.string(),
    role: z.enum(SERVICE_ACCOUNT_ROLES),
    description: z.string().nullable(),
    created_by: z.string().meta({ description: "Who made it: a person's email, or the part of the platform that needed it" }),
    created_at: z.string(),
    disabled_at: z.string().nullable(),
    keys_in_use: z.number().meta({ description: "Its API keys and endpoint keys that are neither revoked nor expired" }),
  })
  .meta({ id: "ServiceAccount" });

export type CreateServiceAccountInput = z.output<typeof createServiceAccountBody>;
export type ServiceAccountJson = z.infer<typeof serviceAccountJsonSchema>;
