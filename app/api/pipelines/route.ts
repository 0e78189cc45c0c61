import { pipelines } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { createPipeline } from "@/lib/pipelines/create-pipeline";
import { pipelineJson } from "@/lib/pipelines/present";
import { listPipelines } from "@/lib/pipelines/queries";

export const POST = route(pipelines.createPipeline, async ({ actor, body, reply }) =>
  reply(201, { pipeline: pipelineJson(await createPipeline(actor, body)) }),
);

export const GET = route(pipelines.listPipelines, async ({ principal, reply }) =>
  reply(200, { data: (await listPipelines(principal)).map((p) => pipelineJson(p)) }),
);
