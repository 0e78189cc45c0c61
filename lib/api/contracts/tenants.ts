import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import { createTenantBody, listTenantsQuery, tenantJsonSchema, updateTenantBody } from "@/lib/tenants/schemas";
import { createUserBody, listUsersQuery, updateUserBody, userJsonSchema } from "@/lib/users/schemas";
import { authErrors, conflictError, idParams, listOf, notFoundError } from "./common";

const tenantReply = z.object({ tenant: tenantJsonSchema });
const userReply = z.object({ user: userJsonSchema });

export const createTenant = defineContract({
  operationId: "createTenant",
  method: "POST",
  path: "/api/tenants",
  summary: "Create a tenant",
  tags: ["Tenants"],
  access: ["operator"],
  body: createTenantBody,
  responses: { 201: { description: "Created", schema: tenantReply }, ...authErrors, ...conflictError },
});

export const listTenants = defineContract({
  operationId: "listTenants",
  method: "GET",
  path: "/api/tenants",
  summary: "List tenants (a tenant sees only itself)",
  tags: ["Tenants"],
  access: ["operator", "tenant"],
  query: listTenantsQuery,
  responses: { 200: { description: "Tenants", schema: listOf(tenantJsonSchema) }, ...authErrors },
});

export const getTenant = defineContract({
  operationId: "getTenant",
  method: "GET",
  path: "/api/tenants/{id}",
  summary: "Get a tenant",
  tags: ["Tenants"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: {
    200: {
      description: "The tenant, with the GPUs it holds now (by holder), its prepaid balance and this month's money",
      schema: z.object({
        tenant: tenantJsonSchema.extend({
          gpu_in_use: z.number().int().meta({ description: "Everything that holds a GPU, as the quota counts it" }),
          gpu_in_use_by: z
            .object({
              jobs: z.number().int(),
              endpoint_replicas: z.number().int(),
              pods: z.number().int(),
              reserved: z.number().int().meta({ description: "GPUs of the nodes its active reservations hold, the work inside included" }),
            })
            .meta({ description: "The split of gpu_in_use; the parts add up to it" }),
          balance_cents: z.number().int(),
          month: z
            .object({
              billed_cents: z.number().int(),
              accruing_cents: z.number().int(),
              total_cents: z.number().int(),
            })
            .meta({ description: "This month so far (UTC): usage billed, and running work accruing since its last segment" }),
        }),
      }),
    },
    ...authErrors,
    ...notFoundError,
  },
});

export const updateTenant = defineContract({
  operationId: "updateTenant",
  method: "PATCH",
  path: "/api/tenants/{id}",
  summary: "Edit or suspend a tenant; a tenant admin sets its own burst only",
  description:
    "Operators change every field. A tenant admin (session or tenant key) may send `burst` alone, for its own tenant: " +
    "whether waiting jobs may run on rented GPU-provider capacity and the price cap per GPU-hour (required while on). " +
    "Another tenant's id answers 404; any other field from a tenant answers 403.",
  tags: ["Tenants"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  params: idParams,
  body: updateTenantBody,
  responses: { 200: { description: "Updated", schema: tenantReply }, ...authErrors, ...notFoundError, ...conflictError },
});

export const listUsers = defineContract({
  operationId: "listUsers",
  method: "GET",
  path: "/api/users",
  summary: "List users (tenant admins see their tenant's users)",
  tags: ["Users"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  query: listUsersQuery,
  responses: { 200: { description: "Users", schema: listOf(userJsonSchema) }, ...authErrors },
});

export const createUser = defineContract({
  operationId: "createUser",
  method: "POST",
  path: "/api/users",
  summary: "Create a user",
  tags: ["Users"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  body: createUserBody,
  rateLimitPerMinute: 60,
  responses: { 201: { description: "Created", schema: userReply }, ...authErrors, ...conflictError },
});

export const updateUser = defineContract({
  operationId: "updateUser",
  method: "PATCH",
  path: "/api/users/{id}",
  summary: "Rename, change role, disable or reset the password of a user",
  tags: ["Users"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  params: idParams,
  body: updateUserBody,
  rateLimitPerMinute: 60,
  responses: { 200: { description: "Updated", schema: userReply }, ...authErrors, ...notFoundError, ...conflictError },
});
