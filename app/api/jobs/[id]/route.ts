import { jobs } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { finishJob } from "@/lib/jobs/finish-job";
import { getJobOrThrow } from "@/lib/jobs/queries";
import { jobJson } from "@/lib/jobs/schemas";

export const GET = route(jobs.getJob, async ({ principal, params }) => json(200, { job: jobJson(await getJobOrThrow(principal, params.id)) }));

export const PATCH = route(jobs.updateJob, async ({ actor, params, body }) => json(200, { job: jobJson(await finishJob(actor, params.id, body)) }));
