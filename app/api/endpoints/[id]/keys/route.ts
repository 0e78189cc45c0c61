import { endpoints } from "@/lib/api/contracts";
import { createEndpointKey, listEndpointKeys } from "@/lib/endpoints/endpoint-keys";
import { route } from "@/lib/http/route";

export const POST = route(endpoints.createEndpointKey, async ({ actor, params, body, reply }) => {
  const { endpointKey, key } = await createEndpointKey(actor, params.id, body);
  return reply(201, { endpoint_key: endpointKey, key });
});

export const GET = route(endpoints.listEndpointKeys, async ({ principal, params, reply }) =>
  reply(200, { data: await listEndpointKeys(principal, params.id) }),
);
