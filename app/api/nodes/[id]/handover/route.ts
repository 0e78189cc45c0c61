import { handover } from "@/lib/api/contracts";
import { startHandover } from "@/lib/handover/start-handover";
import { route } from "@/lib/http/route";

export const POST = route(handover.startHandover, async ({ actor, params, body, reply }) =>
  reply(202, { handover: await startHandover(actor, params.id, body) }),
);
