import { fleet } from "@/lib/api/contracts";
import { nodeJson } from "@/lib/fleet/node-schemas";
import { listNodes } from "@/lib/fleet/queries";
import { json, route } from "@/lib/http/route";

export const GET = route(fleet.listNodes, async ({ principal, query }) => {
  const { data, nextCursor } = await listNodes(principal, query);
  return json(200, { data: data.map(nodeJson), next_cursor: nextCursor });
});
