import { jobs } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { listJobEvents } from "@/lib/jobs/queries";

export const GET = route(jobs.listJobEvents, async ({ principal, params, reply }) => {
  const events = await listJobEvents(principal, params.id);
  return reply(200, {
    data: events.map((e) => ({
      from_status: e.fromStatus,
      to_status: e.toStatus,
      reason: e.reason,
      actor: e.actor,
      created_at: e.createdAt.toISOString(),
    })),
  });
});
