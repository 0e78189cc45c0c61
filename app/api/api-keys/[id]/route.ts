import { apiKeys } from "@/lib/api/contracts";
import { revokeApiKey } from "@/lib/api-keys/revoke-api-key";
import { apiKeyJson } from "@/lib/api-keys/schemas";
import { route } from "@/lib/http/route";

export const DELETE = route(apiKeys.revokeApiKey, async ({ actor, params, reply }) =>
  reply(200, { api_key: apiKeyJson(await revokeApiKey(actor, params.id), actor.principal.kind === "tenant") }),
);
