import "server-only";
import { randomBytes } from "node:crypto";
import type { Actor } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { runOne } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { agentNodeOrThrow } from "./agent-node";
import { policyForNode, quoteSelection } from "./node-policy";
import { INSERT_NONCE } from "./statements";

/**
 * POST /api/nodes/{id}/attestation/nonce: 32 random bytes for the node's agent to quote over,
 * single use, expiring after ATTESTATION_NONCE_TTL_S, with the PCRs its policy needs quoted.
 */
export async function issueNonce(actor: Actor, nodeId: string) {
  const client = db();
  const node = await agentNodeOrThrow(client, actor.principal, nodeId);
  const { policy } = await policyForNode(client, node.id);
  const pcrs = quoteSelection(policy);
  const nonce = randomBytes(32).toString("hex");
  const row = (await runOne(client, INSERT_NONCE, [nonce, node.id, pcrs, env().ATTESTATION_NONCE_TTL_S]))!;
  return { nonce, expires_at: row.expires_at.toISOString(), pcr_bank: "sha256" as const, pcrs };
}
