import { pods } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { changePodState } from "@/lib/pods/change-pod-state";
import { getPodOrThrow } from "@/lib/pods/queries";

export const GET = route(pods.getPod, async ({ principal, params }) => json(200, { pod: await getPodOrThrow(principal, params.id) }));

export const DELETE = route(pods.terminatePod, async ({ actor, params }) => json(200, { pod: await changePodState(actor, params.id, "terminate") }));
