import { jobs } from "@/lib/api/contracts";
import { csvResponse, route } from "@/lib/http/route";
import { jobsCsv } from "@/lib/jobs/list-jobs";

export const GET = route(jobs.exportJobs, async ({ principal, query, send }) =>
  send(200, csvResponse("jobs", await jobsCsv(principal, query))),
);
