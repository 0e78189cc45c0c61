import { jobs } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { listSchedulerLogs } from "@/lib/jobs/queries";

export const GET = route(jobs.schedulerLogs, async ({ query }) => json(200, { data: await listSchedulerLogs(query.limit) }));
