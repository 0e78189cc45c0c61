import "server-only";
import { runOne, type Runner } from "@/lib/db/statement";
import { oneOf } from "@/lib/vocabulary";
import { compilePolicy, FIRMWARE_PCRS, pcrSelectionOf, type StoredPolicy } from "./policy";
import { POLICY_FOR_NODE } from "./statements";
import { ATTESTATION_MODES } from "./vocabulary";

/**
 * The policy a node is attested against: the one naming the image it was provisioned with, else
 * its cluster's; and whether its cluster attests at all (`off` is an operator's explicit choice).
 */
export async function policyForNode(
  client: Runner,
  nodeId: string,
): Promise<{ mode: (typeof ATTESTATION_MODES)[number]; policy: StoredPolicy | null }> {
  const row = await runOne(client, POLICY_FOR_NODE, [nodeId]);
  const mode = oneOf(ATTESTATION_MODES, row?.attestation ?? "required", "cluster_handover_settings.attestation");
  if (!row?.policy_id || !row.name || row.version === null) return { mode, policy: null };
  return { mode, policy: { id: row.policy_id, name: row.name, version: row.version, body: row.body } };
}

/** The PCRs a node's quote must cover under its policy (the firmware PCRs when there is none: the verdict fails on the policy anyway). */
export function quoteSelection(policy: StoredPolicy | null): number[] {
  if (!policy) return [...FIRMWARE_PCRS];
  const c = compilePolicy(policy);
  return c.ok ? pcrSelectionOf(c.policy) : [...FIRMWARE_PCRS];
}
