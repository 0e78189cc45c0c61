import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { uniqueViolationToConflict } from "@/lib/errors";
import { clusterSelect, type CreateClusterInput } from "./cluster-schemas";

export async function createCluster(actor: Actor, input: CreateClusterInput) {
  assertOperator(actor.principal);
  try {
    return await db().$transaction(async (tx) => {
      const cluster = await tx.cluster.create({
        data: { name: input.name, region: input.region ?? null, provider: input.provider ?? null, kind: input.kind ?? "gpu" },
        select: clusterSelect,
      });
      await recordAudit(tx, actor, { action: "cluster.created", targetType: "cluster", targetId: cluster.id, details: { ...input } });
      return cluster;
    });
  } catch (e) {
    return uniqueViolationToConflict(e, "name", "A cluster with this name already exists");
  }
}
