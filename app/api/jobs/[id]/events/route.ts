import { jobs } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { listJobEvents } from "@/lib/jobs/queries";

export const GET = route(jobs.listJobEvents, async ({ principal, params }) => {
  const events = await listJobEvents(principal, params.id);
  return json(200, {
    data: events.map((e) => ({ from_status: e.fromStatus, to_status: e.toStatus, reason: e.reason, actor: e.actor, created_at: e.createdAt.toISOString() })),
  });
});
