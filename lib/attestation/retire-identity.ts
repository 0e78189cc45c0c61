import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import { notFound } from "@/lib/errors";
import { RESOLVE_NODE_ALERT } from "@/lib/handover/alert-statements";
import { NODE_BY_ID } from "./node-statements";
import { RETIRE_IDENTITY } from "./statements";

/**
 * DELETE /api/nodes/{id}/attestation/identity: an operator re-enrols a node (its TPM or board was
 * replaced): the pinned key is retired (kept, never deleted), and the next key the node presents
 * is pinned. A key-mismatch alert the node raised is resolved.
 */
export async function retireIdentity(actor: Actor, nodeId: string): Promise<void> {
  assertOperator(actor.principal);
  await db().$transaction(async (tx) => {
    const node = await runOne(tx, NODE_BY_ID, [nodeId]);
    if (!node) throw notFound("Node");
    const [retired] = await run(tx, RETIRE_IDENTITY, [nodeId, actor.principal.label]);
    if (!retired) throw notFound("Enrolled attestation key");
    await run(tx, RESOLVE_NODE_ALERT, ["attestation_key_mismatch", nodeId, `. Re-enrolled by ${actor.principal.label}.`]);
    await recordAudit(tx, actor, {
      action: "attestation.identity_retired",
      targetType: "node",
      targetId: nodeId,
      details: { hostname: node.hostname },
    });
  });
}
