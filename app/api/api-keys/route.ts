import { apiKeys } from "@/lib/api/contracts";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { apiKeysJson, listApiKeys } from "@/lib/api-keys/queries";
import { route } from "@/lib/http/route";

export const POST = route(apiKeys.createApiKey, async ({ actor, body, reply }) => {
  const { apiKey, key } = await createApiKey(actor, body);
  const [json] = await apiKeysJson(actor.principal, [apiKey]);
  return reply(201, { api_key: json!, key }, { "cache-control": "no-store" });
});

export const GET = route(apiKeys.listApiKeys, async ({ principal, query, reply }) => {
  const { data, nextCursor } = await listApiKeys(principal, query);
  return reply(200, { data: await apiKeysJson(principal, data), next_cursor: nextCursor });
});
