import { pipelines } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { pipelineJson } from "@/lib/pipelines/present";
import { retryPipelineStep } from "@/lib/pipelines/retry-step";

export const POST = route(pipelines.retryPipelineStep, async ({ actor, params }) => json(200, { pipeline: pipelineJson(await retryPipelineStep(actor, params.id, params.step)) }));
