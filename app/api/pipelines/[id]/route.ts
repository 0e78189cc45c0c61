import { jobs } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { getPipelineOrThrow, pipelineLog } from "@/lib/pipelines/queries";
import { pipelineJson } from "@/lib/pipelines/schemas";

export const GET = route(jobs.getPipeline, async ({ principal, params }) => {
  const pipeline = await getPipelineOrThrow(principal, params.id);
  const log = await pipelineLog(principal, params.id);
  return json(200, {
    pipeline: pipelineJson(pipeline),
    log: log.map((e) => ({ step: e.step, message: e.message, created_at: e.createdAt.toISOString() })),
  });
});
