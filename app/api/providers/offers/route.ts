import { providers } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { listOffers } from "@/lib/providers/queries";

export const GET = route(providers.listProviderOffers, async ({ principal, query, reply }) =>
  reply(200, { data: await listOffers(principal, query), next_cursor: null }),
);
