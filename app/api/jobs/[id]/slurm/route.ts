import { slurm } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { jobSlurm } from "@/lib/slurm/queries";
import { reportSlurmJob } from "@/lib/slurm/report-job";

export const GET = route(slurm.getJobSlurm, async ({ principal, params, reply }) => reply(200, await jobSlurm(principal, params.id)));

export const POST = route(slurm.reportSlurmJob, async ({ actor, params, body, reply }) =>
  reply(200, await reportSlurmJob(actor, params.id, body)),
);
