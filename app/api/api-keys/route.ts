import { apiKeys } from "@/lib/api/contracts";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { listApiKeys } from "@/lib/api-keys/queries";
import { apiKeyJson } from "@/lib/api-keys/schemas";
import { route } from "@/lib/http/route";

export const POST = route(apiKeys.createApiKey, async ({ actor, body, reply }) => {
  const { apiKey, key } = await createApiKey(actor, body);
  return reply(201, { api_key: apiKeyJson(apiKey, actor.principal.kind === "tenant"), key }, { "cache-control": "no-store" });
});

export const GET = route(apiKeys.listApiKeys, async ({ principal, query, reply }) => {
  const { data, nextCursor } = await listApiKeys(principal, query);
  return reply(200, { data: data.map((k) => apiKeyJson(k, principal.kind === "tenant")), next_cursor: nextCursor });
});
