import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { notFound, uniqueViolationToConflict } from "@/lib/errors";
import { clusterSelect, type UpdateClusterInput } from "./cluster-schemas";

export async function updateCluster(actor: Actor, id: string, input: UpdateClusterInput) {
  assertOperator(actor.principal);
  try {
    return await db().$transaction(async (tx) => {
      const exists = await tx.cluster.count({ where: { id } });
      if (!exists) throw notFound("Cluster");
      const cluster = await tx.cluster.update({
        where: { id },
        data: { name: input.name, region: input.region, provider: input.provider },
        select: clusterSelect,
      });
      await recordAudit(tx, actor, { action: "cluster.updated", targetType: "cluster", targetId: id, details: { changes: { ...input } } });
      return cluster;
    });
  } catch (e) {
    return uniqueViolationToConflict(e, "name", "A cluster with this name already exists");
  }
}
