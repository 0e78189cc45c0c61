import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { forbidden, notFound } from "@/lib/errors";
import { pipelineInclude } from "./schemas";

function scope(p: Principal) {
  if (p.kind === "tenant") return { tenantId: p.tenantId };
  if (p.kind === "operator") return {};
  throw forbidden("Pipelines belong to tenants");
}

export async function getPipelineOrThrow(p: Principal, id: string) {
  const pipeline = await db().pipeline.findFirst({ where: { id, ...scope(p) }, include: pipelineInclude });
  if (!pipeline) throw notFound("Pipeline");
  return pipeline;
}

export async function listPipelines(p: Principal, limit = 100) {
  return db().pipeline.findMany({ where: scope(p), orderBy: { createdAt: "desc" }, take: limit, include: pipelineInclude });
}

export async function pipelineLog(p: Principal, id: string) {
  await getPipelineOrThrow(p, id);
  return db().pipelineEvent.findMany({ where: { pipelineId: id }, orderBy: { id: "asc" } });
}
