import { fleet } from "@/lib/api/contracts";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { gpuJson, nodeJson } from "@/lib/fleet/node-schemas";
import { getNodeOrThrow, listGpusOfNode } from "@/lib/fleet/queries";
import { route } from "@/lib/http/route";

export const GET = route(fleet.getNode, async ({ principal, params, reply }) => {
  const node = await getNodeOrThrow(principal, params.id);
  return reply(200, { node: nodeJson(node), gpus: (await listGpusOfNode(node.id)).map(gpuJson) });
});

export const PATCH = route(fleet.updateNode, async ({ actor, params, body, reply }) =>
  reply(200, { node: nodeJson(await changeNodeStatus(actor, params.id, body.status, body.reason)) }),
);
