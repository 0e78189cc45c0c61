import { fleet } from "@/lib/api/contracts";
import { gpuJson } from "@/lib/fleet/node-schemas";
import { getGpuOrThrow } from "@/lib/fleet/queries";
import { route } from "@/lib/http/route";

export const GET = route(fleet.getGpu, async ({ principal, params, reply }) =>
  reply(200, { gpu: gpuJson(await getGpuOrThrow(principal, params.id)) }),
);
