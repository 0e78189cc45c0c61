import { providers } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { listProviderInstances } from "@/lib/providers/queries";

export const GET = route(providers.listProviderInstances, async ({ principal, query, reply }) =>
  reply(200, { data: await listProviderInstances(principal, query), next_cursor: null }),
);
