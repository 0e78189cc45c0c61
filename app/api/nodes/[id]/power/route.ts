import { bmc } from "@/lib/api/contracts";
import { powerNode } from "@/lib/bmc/power-node";
import { route } from "@/lib/http/route";

export const POST = route(bmc.powerNode, async ({ actor, params, body, reply }) =>
  reply(202, { power: await powerNode(actor, params.id, body.action) }),
);
