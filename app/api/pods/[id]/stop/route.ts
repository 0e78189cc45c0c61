import { pods } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { changePodState } from "@/lib/pods/change-pod-state";

export const POST = route(pods.stopPod, async ({ actor, params, reply }) =>
  reply(200, { pod: await changePodState(actor, params.id, "stop") }),
);
