import { pipelines } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { cancelPipeline } from "@/lib/pipelines/cancel-pipeline";
import { pipelineJson } from "@/lib/pipelines/present";

export const POST = route(pipelines.cancelPipeline, async ({ actor, params, reply }) =>
  reply(200, { pipeline: pipelineJson(await cancelPipeline(actor, params.id)) }),
);
