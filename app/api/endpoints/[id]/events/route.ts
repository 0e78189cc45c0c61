import { endpoints } from "@/lib/api/contracts";
import { listEndpointHistory } from "@/lib/endpoints/list-endpoint-history";
import { route } from "@/lib/http/route";

export const GET = route(endpoints.listEndpointEvents, async ({ principal, params, reply }) =>
  reply(200, await listEndpointHistory(principal, params.id)),
);
