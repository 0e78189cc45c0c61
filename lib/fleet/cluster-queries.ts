import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { clusterSelect } from "./cluster-schemas";

/** Operators and tenants see every cluster (tenants pick one for placement); an agent only its own. */
export async function getClusterOrThrow(principal: Principal, id: string) {
  if (principal.kind === "agent" && principal.clusterId !== id) throw notFound("Cluster");
  const cluster = await db().cluster.findUnique({ where: { id }, select: clusterSelect });
  if (!cluster) throw notFound("Cluster");
  return cluster;
}

export async function listClusters(principal: Principal, opts: { limit: number; cursor?: string }) {
  const rows = await db().cluster.findMany({
    where: {
      ...(principal.kind === "agent" ? { id: principal.clusterId } : {}),
      ...afterCursor(decodeCursor(opts.cursor)),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
    select: clusterSelect,
  });
  return page(rows, opts.limit);
}

/** Every cluster's id and name, for pickers (rule scopes, job placement). */
export async function clusterNames() {
  return db().cluster.findMany({ select: { id: true, name: true }, orderBy: { name: "asc" } });
}
