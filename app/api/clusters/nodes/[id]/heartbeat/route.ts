import { fleet } from "@/lib/api/contracts";
import { nodeJson } from "@/lib/fleet/node-schemas";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { route } from "@/lib/http/route";

export const POST = route(fleet.heartbeat, async ({ actor, params, body, reply }) => {
  const { node, assignments, leaseS, slurm, handover } = await recordHeartbeat(actor, params.id, body);
  return reply(200, { node: nodeJson(node), assignments, lease_s: leaseS, ...(slurm ? { slurm } : {}), ...(handover ? { handover } : {}) });
});
