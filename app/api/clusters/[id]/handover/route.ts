import { handover } from "@/lib/api/contracts";
import { getHandoverSettings, putHandoverSettings } from "@/lib/handover/settings";
import { route } from "@/lib/http/route";

export const GET = route(handover.getHandoverSettings, async ({ principal, params, reply }) =>
  reply(200, { handover: await getHandoverSettings(principal, params.id) }),
);

export const PUT = route(handover.putHandoverSettings, async ({ actor, params, body, reply }) =>
  reply(200, { handover: await putHandoverSettings(actor, params.id, body) }),
);
