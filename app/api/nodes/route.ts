import { fleet } from "@/lib/api/contracts";
import { nodeJson } from "@/lib/fleet/node-schemas";
import { listNodes } from "@/lib/fleet/queries";
import { route } from "@/lib/http/route";

export const GET = route(fleet.listNodes, async ({ principal, query, reply }) => {
  const { data, nextCursor } = await listNodes(principal, query);
  return reply(200, { data: data.map(nodeJson), next_cursor: nextCursor });
});
