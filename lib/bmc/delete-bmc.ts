import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import { nodeOrThrow } from "./bmc-json";

/** Forgets the node's BMC (its password with it). */
export async function deleteBmc(actor: Actor, nodeId: string): Promise<void> {
  assertOperator(actor.principal);
  await nodeOrThrow(nodeId);
  await db().$transaction(async (tx) => {
    const gone = await tx.nodeBmc.deleteMany({ where: { nodeId } });
    if (gone.count === 0) throw notFound("BMC");
    await recordAudit(tx, actor, { action: "node.bmc_removed", targetType: "node", targetId: nodeId });
  });
}
