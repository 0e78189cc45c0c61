import { jobs } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { listJobs } from "@/lib/jobs/queries";
import { jobJson } from "@/lib/jobs/schemas";
import { submitJob } from "@/lib/jobs/submit-job";

export const POST = route(jobs.submitJob, async ({ actor, body, reply }) => reply(201, { job: jobJson(await submitJob(actor, body)) }));

export const GET = route(jobs.listJobs, async ({ principal, query, reply }) => {
  const { data, nextCursor } = await listJobs(principal, query);
  return reply(200, { data: data.map(jobJson), next_cursor: nextCursor });
});
