import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import { createServiceAccountBody, listServiceAccountsQuery, serviceAccountJsonSchema } from "@/lib/service-accounts/schemas";
import { authErrors, conflictError, idParams, notFoundError } from "./common";

// Service accounts (issue 27): the explicit owner of keys that must outlive a person.

export const listServiceAccounts = defineContract({
  operationId: "listServiceAccounts",
  method: "GET",
  path: "/api/service-accounts",
  summary: "List service accounts, with how many keys each has in use",
  description: "Operators see every account; tenant admins their tenant's.",
  tags: ["API keys"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  query: listServiceAccountsQuery,
  responses: { 200: { description: "Service accounts", schema: z.object({ data: z.array(serviceAccountJsonSchema) }) }, ...authErrors },
});

export const createServiceAccount = defineContract({
  operationId: "createServiceAccount",
  method: "POST",
  path: "/api/service-accounts",
  summary: "Create a service account to own keys that must outlive any one person",
  description:
    "Its keys (POST /api/api-keys or an endpoint's keys with service_account_id) act with its role at most and are revoked when it is disabled. Tenant admins create accounts of their own tenant with a tenant role; operators also create platform accounts (role operator).",
  tags: ["API keys"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  body: createServiceAccountBody,
  rateLimitPerMinute: 60,
  responses: {
    201: { description: "Created", schema: z.object({ service_account: serviceAccountJsonSchema }) },
    ...authErrors,
    ...conflictError,
  },
});

export const disableServiceAccount = defineContract({
  operationId: "disableServiceAccount",
  method: "DELETE",
  path: "/api/service-accounts/{id}",
  summary: "Disable a service account: every key it owns stops working at once",
  tags: ["API keys"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  params: idParams,
  responses: {
    200: { description: "Disabled", schema: z.object({ service_account: serviceAccountJsonSchema }) },
    ...authErrors,
    ...notFoundError,
  },
});
