import "server-only";
import { createPublicKey } from "node:crypto";
import type { Actor } from "@/lib/auth/principal";
import { enqueueNotifications } from "@/lib/alerts/notification-outbox";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { run, runOne, type RowOf } from "@/lib/db/statement";
import { conflict, validationFailed } from "@/lib/errors";
import { FIRE_KEY_MISMATCH_ALERT } from "@/lib/handover/alert-statements";
import { agentNodeOrThrow } from "./agent-node";
import type { EnrolIdentityInput } from "./schemas";
import { ENROL_IDENTITY, LIVE_IDENTITY } from "./statements";

export type IdentityRow = RowOf<typeof LIVE_IDENTITY>;

/** The key's SubjectPublicKeyInfo: two PEMs of one key compare equal whatever their line breaks. */
function spki(pem: string, field: string): Buffer {
  try {
    const key = createPublicKey(pem);
    if (key.asymmetricKeyType !== "ec" && key.asymmetricKeyType !== "rsa") throw new Error(`a ${key.asymmetricKeyType} key`);
    return key.export({ type: "spki", format: "der" });
  } catch (e) {
    throw validationFailed([{ path: field, message: `is not an RSA or EC public key the TPM could hold (${(e as Error).message})` }]);
  }
}

/**
 * POST /api/nodes/{id}/attestation/identity: the first attestation key a node presents is pinned;
 * presenting it again is harmless (200), presenting another is refused (409) and alerts the
 * operators, until one of them retires the pinned key (re-enrolment).
 */
export async function enrolIdentity(
  actor: Actor,
  nodeId: string,
  input: EnrolIdentityInput,
): Promise<{ created: boolean; identity: IdentityRow }> {
  const presented = spki(input.ak_public_pem, "ak_public_pem");
  if (input.ek_public_pem) spki(input.ek_public_pem, "ek_public_pem");
  const outcome = await db().$transaction(async (tx) => {
    const node = await agentNodeOrThrow(tx, actor.principal, nodeId);
    const pinned = await runOne(tx, LIVE_IDENTITY, [node.id]);
    if (!pinned) {
      const created = await runOne(tx, ENROL_IDENTITY, [
        node.id,
        createPublicKey(input.ak_public_pem).export({ type: "spki", format: "pem" }).toString(),
        input.ak_qualified_name ?? null,
        input.ek_public_pem ?? null,
        input.tpm_kind,
        actor.principal.label,
      ]);
      // a parallel enrolment won: compare with what it pinned
      if (created) {
        await recordAudit(tx, actor, {
          action: "attestation.identity_enrolled",
          targetType: "node",
          targetId: node.id,
          details: { hostname: node.hostname, tpm_kind: input.tpm_kind, ak_qualified_name: input.ak_qualified_name ?? null },
        });
        return { kind: "created" as const, identity: created };
      }
    }
    const live = pinned ?? (await runOne(tx, LIVE_IDENTITY, [node.id]))!;
    const same = spki(live.ak_public_pem, "ak_public_pem").equals(presented);
    const namesAgree = !input.ak_qualified_name || !live.ak_qualified_name || input.ak_qualified_name === live.ak_qualified_name;
    if (same && namesAgree) return { kind: "same" as const, identity: live };
    return { kind: "mismatch" as const, identity: live, node };
  });
  if (outcome.kind === "created") return { created: true, identity: outcome.identity };
  if (outcome.kind === "same") return { created: false, identity: outcome.identity };
  // the refusal is recorded, and the operators called, in a transaction of its own: the 409 changes nothing else
  const alert = await db().$transaction(async (tx) => {
    const [a] = await run(tx, FIRE_KEY_MISMATCH_ALERT, [
      outcome.node.id,
      `Node ${outcome.node.hostname} presented another attestation key than the one it enrolled on ${outcome.identity.enrolled_at.toISOString()}: refused. A replaced TPM or motherboard is re-enrolled by an operator; anything else is an impostor`,
      JSON.stringify({
        presented_qualified_name: input.ak_qualified_name ?? null,
        pinned_qualified_name: outcome.identity.ak_qualified_name,
        tpm_kind: input.tpm_kind,
      }),
    ]);
    await recordAudit(tx, actor, {
      action: "attestation.identity_refused",
      targetType: "node",
      targetId: outcome.node.id,
      details: { hostname: outcome.node.hostname, presented_qualified_name: input.ak_qualified_name ?? null },
    });
    return a;
  });
  if (alert) await enqueueNotifications([alert.id], "firing");
  throw conflict(
    "This node enrolled another attestation key; an operator must re-enrol it (DELETE /api/nodes/{id}/attestation/identity) before a new key is accepted",
    [{ path: "ak_public_pem", message: "differs from the node's pinned attestation key" }],
  );
}
