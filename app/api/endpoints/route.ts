import { endpoints } from "@/lib/api/contracts";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { endpointJson } from "@/lib/endpoints/endpoint-json";
import { listEndpoints } from "@/lib/endpoints/list-endpoints";
import { route } from "@/lib/http/route";

export const POST = route(endpoints.createEndpoint, async ({ actor, body, reply }) =>
  reply(201, { endpoint: endpointJson(await createEndpoint(actor, body)) }),
);

export const GET = route(endpoints.listEndpoints, async ({ principal, query, reply }) => {
  const { data, nextCursor } = await listEndpoints(principal, query);
  return reply(200, { data: data.map(endpointJson), next_cursor: nextCursor });
});
