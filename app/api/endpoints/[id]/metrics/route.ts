import { endpoints } from "@/lib/api/contracts";
import { endpointSeries, ingestEndpointMetrics } from "@/lib/endpoints/endpoint-metrics";
import { json, route } from "@/lib/http/route";

export const POST = route(endpoints.postEndpointMetrics, async ({ actor, params, body }) => json(202, await ingestEndpointMetrics(actor, params.id, body.samples)));

export const GET = route(endpoints.getEndpointMetrics, async ({ principal, params, query }) => json(200, await endpointSeries(principal, params.id, query)));
