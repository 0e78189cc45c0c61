import { pipelines } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { pipelineEventJson } from "@/lib/pipelines/present";
import { pipelineLog } from "@/lib/pipelines/queries";

export const GET = route(pipelines.getPipelineLog, async ({ principal, params, query, reply }) => {
  const data = (await pipelineLog(principal, params.id, query)).map(pipelineEventJson);
  return reply(200, { data, next_after: data.at(-1)?.id ?? (query.after !== undefined ? String(query.after) : null) });
});
