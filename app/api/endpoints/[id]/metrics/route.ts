import { endpoints } from "@/lib/api/contracts";
import { endpointSeries, ingestEndpointMetrics } from "@/lib/endpoints/endpoint-metrics";
import { route } from "@/lib/http/route";

export const POST = route(endpoints.postEndpointMetrics, async ({ actor, params, body, reply }) =>
  reply(202, await ingestEndpointMetrics(actor, params.id, body.samples)),
);

export const GET = route(endpoints.getEndpointMetrics, async ({ principal, params, query, reply }) =>
  reply(200, await endpointSeries(principal, params.id, query)),
);
