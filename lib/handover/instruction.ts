import "server-only";
import { runOne, type Runner } from "@/lib/db/statement";
import type { HandoverInstruction } from "./schemas";
import { HANDOVER_STATE_OF_NODE } from "./statements";

/**
 * What a node in a handover (or a provisioning's inspection) is to do, for its heartbeat's answer:
 * wipe while it is wiping and has not reported, attest while it is inspecting and has sent no
 * evidence. Nothing otherwise (the control plane's runner acts on what the node reported).
 */
export async function handoverInstruction(client: Runner, nodeId: string): Promise<HandoverInstruction | undefined> {
  const s = await runOne(client, HANDOVER_STATE_OF_NODE, [nodeId]);
  if (!s) return undefined;
  if (s.kind === "handover" && s.status === "wiping" && !s.wiped)
    return {
      workflow_id: s.workflow_id,
      action: "wipe",
      wipe: { command: s.wipe_command, timeout_s: s.wipe_timeout_s },
      report_path: `/api/nodes/${nodeId}/wipe`,
    };
  if (s.status === "inspecting" && s.attestation === "required" && !s.attested)
    return {
      workflow_id: s.workflow_id,
      action: "attest",
      attest: {
        identity_path: `/api/nodes/${nodeId}/attestation/identity`,
        nonce_path: `/api/nodes/${nodeId}/attestation/nonce`,
        evidence_path: `/api/nodes/${nodeId}/attestation`,
      },
    };
  return undefined;
}
