import { marketing } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { createDemoRequest, demoRequestJson, listDemoRequests } from "@/lib/marketing/site";

export const POST = route(marketing.createDemoRequest, async ({ body, reply }) => {
  const r = await createDemoRequest(body);
  return reply(201, { demo_request: { id: r.id, created_at: r.createdAt.toISOString() } });
});

export const GET = route(marketing.listDemoRequests, async ({ principal, query, reply }) => {
  const { data, nextCursor } = await listDemoRequests(principal, query);
  return reply(200, { data: data.map(demoRequestJson), next_cursor: nextCursor });
});
