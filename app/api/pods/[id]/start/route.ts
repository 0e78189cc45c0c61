import { pods } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { changePodState } from "@/lib/pods/change-pod-state";

export const POST = route(pods.startPod, async ({ actor, params }) => json(200, { pod: await changePodState(actor, params.id, "start") }));
