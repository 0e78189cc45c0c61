import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { conflict, notFound } from "@/lib/errors";

/**
 * Deletes an empty cluster. A cluster with live agent keys is refused (revoke them first, so no
 * agent is cut off by surprise); revoked keys go with it, their history stays in the audit log.
 */
export async function deleteCluster(actor: Actor, id: string) {
  assertOperator(actor.principal);
  await db().$transaction(async (tx) => {
    const cluster = await tx.cluster.findUnique({ where: { id }, select: { id: true, name: true } });
    if (!cluster) throw notFound("Cluster");
    const liveKeys = await tx.apiKey.count({ where: { clusterId: id, revokedAt: null } });
    if (liveKeys > 0) throw conflict(`Cluster has ${liveKeys} active agent key(s); revoke them first`);
    await tx.apiKey.deleteMany({ where: { clusterId: id } });
    await tx.cluster.delete({ where: { id } });
    await recordAudit(tx, actor, { action: "cluster.deleted", targetType: "cluster", targetId: id, details: { name: cluster.name } });
  });
}
