import { z } from "zod";
import { apiKeyJsonSchema, createApiKeyBody, listApiKeysQuery } from "@/lib/api-keys/schemas";
import { defineContract } from "@/lib/http/contract";
import { authErrors, idParams, listOf, notFoundError } from "./common";

export const createApiKey = defineContract({
  operationId: "createApiKey",
  method: "POST",
  path: "/api/api-keys",
  summary: "Create an API key; the full key is returned only in this reply",
  tags: ["API keys"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  body: createApiKeyBody,
  rateLimitPerMinute: 60,
  responses: {
    201: { description: "Created", schema: z.object({ api_key: apiKeyJsonSchema, key: z.string() }) },
    ...authErrors,
  },
});

export const listApiKeys = defineContract({
  operationId: "listApiKeys",
  method: "GET",
  path: "/api/api-keys",
  summary: "List API keys (never the keys themselves)",
  tags: ["API keys"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  query: listApiKeysQuery,
  responses: { 200: { description: "Keys", schema: listOf(apiKeyJsonSchema) }, ...authErrors },
});

export const revokeApiKey = defineContract({
  operationId: "revokeApiKey",
  method: "DELETE",
  path: "/api/api-keys/{id}",
  summary: "Revoke an API key; it stops working on the next request",
  tags: ["API keys"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  params: idParams,
  responses: {
    200: { description: "Revoked", schema: z.object({ api_key: apiKeyJsonSchema }) },
    ...authErrors,
    ...notFoundError,
  },
});
