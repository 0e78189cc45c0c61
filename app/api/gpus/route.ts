import { fleet } from "@/lib/api/contracts";
import { gpuJson } from "@/lib/fleet/node-schemas";
import { listGpus } from "@/lib/fleet/queries";
import { json, route } from "@/lib/http/route";

export const GET = route(fleet.listGpus, async ({ principal, query }) => {
  const { data, nextCursor } = await listGpus(principal, query);
  return json(200, { data: data.map(gpuJson), next_cursor: nextCursor });
});
