import "server-only";
import { assertOperator, type Actor, type Principal } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { run, runOne, type RowOf, type Runner } from "@/lib/db/statement";
import { notFound, validationFailed } from "@/lib/errors";
import { GET_POLICY } from "@/lib/attestation/statements";
import type { HandoverSettingsInput } from "./schemas";
import { HANDOVER_SETTINGS, PUT_HANDOVER_SETTINGS } from "./statements";

type SettingsRow = RowOf<typeof HANDOVER_SETTINGS>;

function handoverSettingsJson(r: SettingsRow) {
  return {
    cluster_id: r.cluster_id,
    wipe_command: r.wipe_command,
    wipe_timeout_s: r.wipe_timeout_s,
    attestation: r.attestation === "off" ? ("off" as const) : ("required" as const),
    attestation_policy_id: r.attestation_policy_id,
    attestation_policy: r.attestation_policy_name,
    attestation_timeout_s: r.attestation_timeout_s,
    updated_by: r.updated_by,
    updated_at: r.updated_at?.toISOString() ?? null,
  };
}

/** A cluster's handover settings (its defaults when none were set). */
export async function handoverSettingsOf(client: Runner, clusterId: string): Promise<SettingsRow> {
  const row = await runOne(client, HANDOVER_SETTINGS, [clusterId]);
  if (!row) throw notFound("Cluster");
  return row;
}

export async function getHandoverSettings(p: Principal, clusterId: string) {
  assertOperator(p);
  return handoverSettingsJson(await handoverSettingsOf(db(), clusterId));
}

/**
 * PUT /api/clusters/{id}/handover: the operator's wipe command (run on the host by the agent, never
 * by tenant code), its time limit, and how the cluster's nodes are attested. Turning attestation
 * off is explicit and audited: nodes then go back into service after the wipe without proof.
 */
export async function putHandoverSettings(actor: Actor, clusterId: string, input: HandoverSettingsInput) {
  assertOperator(actor.principal);
  return db().$transaction(async (tx) => {
    const before = await handoverSettingsOf(tx, clusterId);
    if (input.attestation_policy_id && !(await runOne(tx, GET_POLICY, [input.attestation_policy_id])))
      throw validationFailed([{ path: "attestation_policy_id", message: "no such attestation policy" }]);
    await run(tx, PUT_HANDOVER_SETTINGS, [
      clusterId,
      input.wipe_command,
      input.wipe_timeout_s,
      input.attestation,
      input.attestation_policy_id,
      input.attestation_timeout_s,
      actor.principal.label,
    ]);
    await recordAudit(tx, actor, {
      action: "cluster.handover_settings_changed",
      targetType: "cluster",
      targetId: clusterId,
      details: {
        wipe_command: input.wipe_command !== before.wipe_command ? "changed" : "unchanged",
        attestation: input.attestation,
        attestation_policy_id: input.attestation_policy_id,
        ...(before.attestation !== input.attestation ? { attestation_was: before.attestation } : {}),
      },
    });
    return handoverSettingsJson(await handoverSettingsOf(tx, clusterId));
  });
}
