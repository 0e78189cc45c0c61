import { endpoints } from "@/lib/api/contracts";
import { revokeEndpointKey } from "@/lib/endpoints/endpoint-keys";
import { route } from "@/lib/http/route";

export const DELETE = route(endpoints.revokeEndpointKey, async ({ actor, params, reply }) =>
  reply(200, { endpoint_key: await revokeEndpointKey(actor, params.id, params.key_id) }),
);
