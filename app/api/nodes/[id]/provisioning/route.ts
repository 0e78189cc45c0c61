import { bmc } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { latestProvisioningOrThrow } from "@/lib/provisioning/queries";

export const GET = route(bmc.getNodeProvisioning, async ({ principal, params, reply }) =>
  reply(200, { provisioning: await latestProvisioningOrThrow(principal, params.id) }),
);
