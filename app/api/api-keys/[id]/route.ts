import { apiKeys } from "@/lib/api/contracts";
import { apiKeysJson } from "@/lib/api-keys/queries";
import { revokeApiKey } from "@/lib/api-keys/revoke-api-key";
import { route } from "@/lib/http/route";

export const DELETE = route(apiKeys.revokeApiKey, async ({ actor, params, reply }) => {
  const [json] = await apiKeysJson(actor.principal, [await revokeApiKey(actor, params.id)]);
  return reply(200, { api_key: json! });
});
