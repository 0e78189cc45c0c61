import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db, txClient } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import { conflict, isUniqueViolation } from "@/lib/errors";
import { getPolicyOrThrow, type PolicyJson } from "./policy-queries";
import type { CreatePolicyInput } from "./schemas";
import { INSERT_POLICY, INSERT_POLICY_VERSION } from "./statements";

/** POST /api/attestation/policies: a named policy at version 1 (names are unique, whatever their case). */
export async function createPolicy(actor: Actor, input: CreatePolicyInput): Promise<PolicyJson> {
  assertOperator(actor.principal);
  const { name, description, ...body } = input;
  try {
    return await db().$transaction(async (tx) => {
      const { id } = (await runOne(tx, INSERT_POLICY, [name, description ?? null, actor.principal.label]))!;
      await run(tx, INSERT_POLICY_VERSION, [id, 1, JSON.stringify(body), actor.principal.label]);
      await recordAudit(tx, actor, {
        action: "attestation.policy_created",
        targetType: "attestation_policy",
        targetId: id,
        details: { name, version: 1 },
      });
      return getPolicyOrThrow(actor.principal, id, txClient(tx));
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`An attestation policy named ${name} exists`, [{ path: "name", message: "is taken" }]);
    throw e;
  }
}
