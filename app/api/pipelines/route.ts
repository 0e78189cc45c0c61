import { jobs } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { createPipeline } from "@/lib/pipelines/create-pipeline";
import { listPipelines } from "@/lib/pipelines/queries";
import { pipelineJson } from "@/lib/pipelines/schemas";

export const POST = route(jobs.createPipeline, async ({ actor, body }) => json(201, { pipeline: pipelineJson(await createPipeline(actor, body)) }));

export const GET = route(jobs.listPipelines, async ({ principal }) => json(200, { data: (await listPipelines(principal)).map(pipelineJson) }));
