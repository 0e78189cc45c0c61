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
      description: "The tenant, with GPUs held now and its prepaid balance",
      schema: z.object({ tenant: tenantJsonSchema.extend({ gpu_in_use: z.number().int(), balance_cents: z.number().int() }) }),
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
