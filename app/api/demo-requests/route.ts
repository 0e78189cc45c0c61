import { marketing } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { createDemoRequest, demoRequestJson, listDemoRequests } from "@/lib/marketing/site";

export const POST = route(marketing.createDemoRequest, async ({ body }) => {
  const r = await createDemoRequest(body);
  return json(201, { demo_request: { id: r.id, created_at: r.createdAt.toISOString() } });
});

export const GET = route(marketing.listDemoRequests, async ({ principal, query }) => {
  const { data, nextCursor } = await listDemoRequests(principal, query);
  return json(200, { data: data.map(demoRequestJson), next_cursor: nextCursor });
});
