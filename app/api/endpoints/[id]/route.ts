import { endpoints } from "@/lib/api/contracts";
import { deleteEndpoint, endpointJson, getEndpointOrThrow, updateEndpoint } from "@/lib/endpoints/endpoints";
import { json, route } from "@/lib/http/route";

export const GET = route(endpoints.getEndpoint, async ({ principal, params }) => json(200, { endpoint: endpointJson(await getEndpointOrThrow(principal, params.id)) }));

export const PATCH = route(endpoints.updateEndpoint, async ({ actor, params, body }) => json(200, { endpoint: endpointJson(await updateEndpoint(actor, params.id, body)) }));

export const DELETE = route(endpoints.deleteEndpoint, async ({ actor, params }) => {
  await deleteEndpoint(actor, params.id);
  return new Response(null, { status: 204 });
});
