import { pods } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { listPodEvents } from "@/lib/pods/queries";

export const GET = route(pods.listPodEvents, async ({ principal, params, reply }) =>
  reply(200, { data: await listPodEvents(principal, params.id) }),
);
