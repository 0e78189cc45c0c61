import { endpoints } from "@/lib/api/contracts";
import { endpointSla } from "@/lib/endpoints/endpoint-sla";
import { route } from "@/lib/http/route";

export const GET = route(endpoints.getEndpointSla, async ({ principal, params, query, reply }) =>
  reply(200, { sla: await endpointSla(principal, params.id, query) }),
);
