import { providers } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { listProviders } from "@/lib/providers/queries";

export const GET = route(providers.listProviders, async ({ principal, reply }) =>
  reply(200, { data: await listProviders(principal), next_cursor: null }),
);
