import { pipelines } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { pipelineOutputs } from "@/lib/pipelines/queries";

export const GET = route(pipelines.getPipelineOutputs, async ({ principal, params, reply }) =>
  reply(200, {
    data: (await pipelineOutputs(principal, params.id)).map((o) => ({
      step: o.step,
      iteration: o.iteration,
      output: o.output,
      bytes: o.bytes,
      source: o.source,
      created_at: o.createdAt.toISOString(),
    })),
  }),
);
