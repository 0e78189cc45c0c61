import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db, txClient } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import { notFound } from "@/lib/errors";
import { getPolicyOrThrow, type PolicyJson } from "./policy-queries";
import type { UpdatePolicyInput } from "./schemas";
import { INSERT_POLICY_VERSION, LOCK_POLICY, SET_POLICY_VERSION } from "./statements";

/**
 * PATCH /api/attestation/policies/{id}: a new version of the policy (the old ones stay: verdicts
 * name the version they were judged by). Nodes are judged by it from their next attestation.
 */
export async function updatePolicy(actor: Actor, id: string, input: UpdatePolicyInput): Promise<PolicyJson> {
  assertOperator(actor.principal);
  const { description, ...body } = input;
  return db().$transaction(async (tx) => {
    const p = await runOne(tx, LOCK_POLICY, [id]);
    if (!p) throw notFound("Attestation policy");
    const version = p.current_version + 1;
    await run(tx, INSERT_POLICY_VERSION, [id, version, JSON.stringify(body), actor.principal.label]);
    await run(tx, SET_POLICY_VERSION, [id, version, description ?? null, description !== undefined]);
    await recordAudit(tx, actor, {
      action: "attestation.policy_versioned",
      targetType: "attestation_policy",
      targetId: id,
      details: { name: p.name, version },
    });
    return getPolicyOrThrow(actor.principal, id, txClient(tx));
  });
}
