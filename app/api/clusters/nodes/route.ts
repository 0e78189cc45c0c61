import { fleet } from "@/lib/api/contracts";
import { gpuJson, nodeJson } from "@/lib/fleet/node-schemas";
import { registerNode } from "@/lib/fleet/register-node";
import { route } from "@/lib/http/route";

export const POST = route(fleet.registerNode, async ({ actor, body, reply }) => {
  const { node, gpus, created } = await registerNode(actor, body);
  return reply(created ? 201 : 200, { node: nodeJson(node), gpus: gpus.map(gpuJson) });
});
