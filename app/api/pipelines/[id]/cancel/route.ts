import { pipelines } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { cancelPipeline } from "@/lib/pipelines/cancel-pipeline";
import { pipelineJson } from "@/lib/pipelines/present";

export const POST = route(pipelines.cancelPipeline, async ({ actor, params }) => json(200, { pipeline: pipelineJson(await cancelPipeline(actor, params.id)) }));
