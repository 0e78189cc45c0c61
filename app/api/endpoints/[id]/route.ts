import { endpoints } from "@/lib/api/contracts";
import { deleteEndpoint } from "@/lib/endpoints/delete-endpoint";
import { endpointJson } from "@/lib/endpoints/endpoint-json";
import { getEndpointOrThrow } from "@/lib/endpoints/get-endpoint";
import { updateEndpoint } from "@/lib/endpoints/update-endpoint";
import { route } from "@/lib/http/route";

export const GET = route(endpoints.getEndpoint, async ({ principal, params, reply }) =>
  reply(200, { endpoint: endpointJson(await getEndpointOrThrow(principal, params.id)) }),
);

export const PATCH = route(endpoints.updateEndpoint, async ({ actor, params, body, reply }) =>
  reply(200, { endpoint: endpointJson(await updateEndpoint(actor, params.id, body)) }),
);

export const DELETE = route(endpoints.deleteEndpoint, async ({ actor, params, send }) => {
  await deleteEndpoint(actor, params.id);
  return send(204);
});
