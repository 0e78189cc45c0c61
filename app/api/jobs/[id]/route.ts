import { jobs } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { cancelJob } from "@/lib/jobs/cancel-job";
import { finishJob } from "@/lib/jobs/finish-job";
import { getJobOrThrow } from "@/lib/jobs/queries";
import { jobJson } from "@/lib/jobs/schemas";

export const GET = route(jobs.getJob, async ({ principal, params, reply }) =>
  reply(200, { job: jobJson(await getJobOrThrow(principal, params.id)) }),
);

// a cancellation goes through who-may-cancel; an agent's or operator's exit report straight to finishJob
export const PATCH = route(jobs.updateJob, async ({ actor, params, body, reply }) =>
  reply(200, {
    job: jobJson(
      await (body.status === "cancelled" && actor.principal.kind !== "agent"
        ? cancelJob(actor, params.id)
        : finishJob(actor, params.id, body)),
    ),
  }),
);
