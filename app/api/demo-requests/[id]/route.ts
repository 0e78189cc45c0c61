import { marketing } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { demoRequestJson, updateDemoRequest } from "@/lib/marketing/site";

export const PATCH = route(marketing.updateDemoRequest, async ({ actor, params, body, reply }) =>
  reply(200, { demo_request: demoRequestJson(await updateDemoRequest(actor, params.id, body.status)) }),
);
