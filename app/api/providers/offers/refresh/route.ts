import { providers } from "@/lib/api/contracts";
import { emitEvent } from "@/lib/background/emit";
import { route } from "@/lib/http/route";

export const POST = route(providers.refreshProviderOffers, async ({ principal, reply }) => {
  await emitEvent("providers/offers.refresh.requested", { requested_by: principal.label });
  return reply(202, { requested: true });
});
