import { pods } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { createPod } from "@/lib/pods/create-pod";
import { listPods } from "@/lib/pods/queries";

export const POST = route(pods.createPod, async ({ actor, body }) => json(201, { pod: await createPod(actor, body) }));

export const GET = route(pods.listPods, async ({ principal, query }) => {
  const { data, nextCursor } = await listPods(principal, query);
  return json(200, { data, next_cursor: nextCursor });
});
