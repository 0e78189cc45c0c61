import { pods } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { changePodState } from "@/lib/pods/change-pod-state";
import { getPodOrThrow } from "@/lib/pods/queries";

export const GET = route(pods.getPod, async ({ principal, params, reply }) =>
  reply(200, { pod: await getPodOrThrow(principal, params.id) }),
);

export const DELETE = route(pods.terminatePod, async ({ actor, params, reply }) =>
  reply(200, { pod: await changePodState(actor, params.id, "terminate") }),
);
