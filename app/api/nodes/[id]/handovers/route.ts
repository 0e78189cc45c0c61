import { handover } from "@/lib/api/contracts";
import { listHandoversOfNode } from "@/lib/handover/queries";
import { route } from "@/lib/http/route";

export const GET = route(handover.listHandovers, async ({ principal, params, reply }) =>
  reply(200, { data: await listHandoversOfNode(principal, params.id) }),
);
