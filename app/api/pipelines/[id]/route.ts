import { pipelines } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { pipelineEventJson, pipelineJson } from "@/lib/pipelines/present";
import { getPipelineWithOutputs, pipelineLog } from "@/lib/pipelines/queries";

export const GET = route(pipelines.getPipeline, async ({ principal, params, reply }) => {
  const { pipeline, outputs } = await getPipelineWithOutputs(principal, params.id);
  const log = await pipelineLog(principal, params.id);
  return reply(200, { pipeline: pipelineJson(pipeline, outputs), log: log.map(pipelineEventJson) });
});
