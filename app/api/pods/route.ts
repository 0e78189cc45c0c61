import { pods } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { createPod } from "@/lib/pods/create-pod";
import { listPods } from "@/lib/pods/queries";

export const POST = route(pods.createPod, async ({ actor, body, reply }) => reply(201, { pod: await createPod(actor, body) }));

export const GET = route(pods.listPods, async ({ principal, query, reply }) => {
  const { data, nextCursor } = await listPods(principal, query);
  return reply(200, { data, next_cursor: nextCursor });
});
