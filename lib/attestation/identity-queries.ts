import "server-only";
import { assertOperator, type Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { runOne } from "@/lib/db/statement";
import { notFound } from "@/lib/errors";
import { oneOf } from "@/lib/vocabulary";
import type { IdentityRow } from "./enrol-identity";
import { NODE_BY_ID } from "./node-statements";
import { TPM_KINDS } from "./schemas";
import { LIVE_IDENTITY } from "./statements";

export function identityJson(r: IdentityRow) {
  return {
    node_id: r.node_id,
    ak_public_pem: r.ak_public_pem,
    ak_qualified_name: r.ak_qualified_name,
    ek_public_pem: r.ek_public_pem,
    tpm_kind: oneOf(TPM_KINDS, r.tpm_kind, "attestation_identities.tpm_kind"),
    enrolled_at: r.enrolled_at.toISOString(),
    enrolled_by: r.enrolled_by,
  };
}

/** The node's pinned attestation key (null: it has not enrolled one), for operators. */
export async function getIdentity(p: Principal, nodeId: string): Promise<IdentityRow | null> {
  assertOperator(p);
  if (!(await runOne(db(), NODE_BY_ID, [nodeId]))) throw notFound("Node");
  return (await runOne(db(), LIVE_IDENTITY, [nodeId])) ?? null;
}
