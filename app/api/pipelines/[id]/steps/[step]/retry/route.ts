import { pipelines } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { pipelineJson } from "@/lib/pipelines/present";
import { retryPipelineStep } from "@/lib/pipelines/retry-step";

export const POST = route(pipelines.retryPipelineStep, async ({ actor, params, reply }) =>
  reply(200, { pipeline: pipelineJson(await retryPipelineStep(actor, params.id, params.step)) }),
);
