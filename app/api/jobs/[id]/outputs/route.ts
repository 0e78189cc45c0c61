import { pipelines } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { listJobOutputs, postJobOutputs } from "@/lib/jobs/post-job-outputs";

export const POST = route(pipelines.postJobOutputs, async ({ principal, params, body, reply }) =>
  reply(200, await postJobOutputs(principal, params.id, body)),
);

export const GET = route(pipelines.listJobOutputs, async ({ principal, params, reply }) =>
  reply(200, { data: await listJobOutputs(principal, params.id) }),
);
