import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { getEndpointOrThrow } from "./get-endpoint";
import { reconcileEndpoints } from "./reconcile-endpoints";

/** Deletes an endpoint: its replicas stop (their last segment billed) and it disappears from lists; its history stays. */
export async function deleteEndpoint(actor: Actor, id: string) {
  const e = await getEndpointOrThrow(actor.principal, id);
  await db().endpoint.update({ where: { id }, data: { stopRequested: true } });
  await reconcileEndpoints({ endpointId: id });
  await db().$transaction(async (tx) => {
    await tx.endpoint.update({ where: { id }, data: { deletedAt: new Date() } });
    await recordAudit(tx, actor, {
      action: "endpoint.deleted",
      targetType: "endpoint",
      targetId: id,
      tenantId: e.tenantId,
      details: { name: e.name },
    });
  });
  return { id, name: e.name };
}
