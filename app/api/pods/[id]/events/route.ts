import { pods } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { listPodEvents } from "@/lib/pods/queries";

export const GET = route(pods.listPodEvents, async ({ principal, params }) => json(200, { data: await listPodEvents(principal, params.id) }));
