import { bmc } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { startProvisioning } from "@/lib/provisioning/start-provisioning";

export const POST = route(bmc.provisionNode, async ({ actor, params, body, reply }) =>
  reply(202, { provisioning: await startProvisioning(actor, params.id, body) }),
);
