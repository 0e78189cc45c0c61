import { fleet } from "@/lib/api/contracts";
import { gpuJson } from "@/lib/fleet/node-schemas";
import { listGpus } from "@/lib/fleet/queries";
import { route } from "@/lib/http/route";

export const GET = route(fleet.listGpus, async ({ principal, query, reply }) => {
  const { data, nextCursor } = await listGpus(principal, query);
  return reply(200, { data: data.map(gpuJson), next_cursor: nextCursor });
});
