import "server-only";
import type { TenantPrincipal } from "@/lib/auth/principal";
import { nullIfRefused } from "@/lib/errors";
import { depths } from "./dag";
import { stepLoop } from "./present";
import { getPipelineWithOutputs, pipelineLog } from "./queries";
import { ancestors, loopBody } from "./spec";

/**
 * Everything a pipeline's page shows, or null when the caller may not see it: with each step's
 * depth in the graph and, for the steps inside a loop, the loop's bound.
 */
export async function pipelinePageData(p: TenantPrincipal, id: string) {
  const found = await nullIfRefused(getPipelineWithOutputs(p, id));
  if (!found) return null;
  const { pipeline, outputs } = found;
  const log = await pipelineLog(p, id);
  const graph = pipeline.steps.map((s) => ({ name: s.name, depends_on: s.dependsOn }));
  const anc = ancestors(graph);
  const loopOfStep = new Map<string, { max: number }>();
  for (const end of pipeline.steps) {
    const l = stepLoop(end);
    if (l) for (const name of loopBody(l.from, end.name, anc)) loopOfStep.set(name, { max: l.max });
  }
  return { pipeline, outputs, log, depth: depths(graph), loopOfStep, running: pipeline.status === "running" };
}
