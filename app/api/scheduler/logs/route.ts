import { jobs } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { listSchedulerLogs } from "@/lib/jobs/queries";

export const GET = route(jobs.schedulerLogs, async ({ query, reply }) => reply(200, { data: await listSchedulerLogs(query.limit) }));
