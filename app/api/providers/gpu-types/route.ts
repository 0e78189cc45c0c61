import { providers } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { listGpuMappings } from "@/lib/providers/queries";
import { clearGpuMapping, setGpuMapping } from "@/lib/providers/set-gpu-mapping";

export const GET = route(providers.listGpuMappings, async ({ principal, reply }) =>
  reply(200, { data: await listGpuMappings(principal), next_cursor: null }),
);

export const PUT = route(providers.setGpuMapping, async ({ actor, body, reply }) =>
  reply(200, { mapping: await setGpuMapping(actor, body) }),
);

export const DELETE = route(providers.clearGpuMapping, async ({ actor, query, reply }) =>
  reply(200, { mapping: await clearGpuMapping(actor, query) }),
);
