import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { db } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import { latestOutputs } from "./advance-pipeline";
import type { Json } from "./expressions";
import { pipelineInclude } from "./present";

const scope = (p: Principal) => tenantScope(p, "Pipelines belong to tenants");

export async function getPipelineOrThrow(p: Principal, id: string) {
  const pipeline = await db().pipeline.findFirst({ where: { id, ...scope(p) }, include: pipelineInclude });
  if (!pipeline) throw notFound("Pipeline");
  return pipeline;
}

/** A pipeline with each step's latest output. */
export async function getPipelineWithOutputs(p: Principal, id: string) {
  const pipeline = await getPipelineOrThrow(p, id);
  const outputs = await latestOutputs(
    db(),
    id,
    pipeline.steps.map((s) => s.name),
  );
  return { pipeline, outputs };
}

export async function listPipelines(p: Principal, limit = 100) {
  return db().pipeline.findMany({ where: scope(p), orderBy: { createdAt: "desc" }, take: limit, include: pipelineInclude });
}

/** The workflow log, oldest first; `after` follows a running pipeline. */
export async function pipelineLog(p: Principal, id: string, opts: { after?: number; limit?: number } = {}) {
  await getPipelineOrThrow(p, id);
  return db().pipelineEvent.findMany({
    where: { pipelineId: id, ...(opts.after !== undefined ? { id: { gt: BigInt(opts.after) } } : {}) },
    orderBy: { id: "asc" },
    take: opts.limit ?? 1000,
  });
}

/** Every output of every step, per loop iteration, oldest first. */
export async function pipelineOutputs(
  p: Principal,
  id: string,
): Promise<Array<{ step: string; iteration: number; output: Json; bytes: number; source: string; createdAt: Date }>> {
  await getPipelineOrThrow(p, id);
  const rows = await db().pipelineStepOutput.findMany({
    where: { pipelineId: id },
    orderBy: [{ createdAt: "asc" }],
    select: { step: true, iteration: true, output: true, bytes: true, source: true, createdAt: true },
  });
  return rows.map((r) => ({ ...r, output: r.output as Json }));
}
