import { fleet } from "@/lib/api/contracts";
import { gpuJson, nodeJson } from "@/lib/fleet/node-schemas";
import { registerNode } from "@/lib/fleet/register-node";
import { json, route } from "@/lib/http/route";

export const POST = route(fleet.registerNode, async ({ actor, body }) => {
  const { node, gpus, created } = await registerNode(actor, body);
  return json(created ? 201 : 200, { node: nodeJson(node), gpus: gpus.map(gpuJson) });
});
