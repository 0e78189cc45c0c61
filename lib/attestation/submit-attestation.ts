import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { emitEvent } from "@/lib/background/emit";
import { db } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import { validationFailed } from "@/lib/errors";
import { RUNNING_WORKFLOW_OF_NODE } from "@/lib/fleet/workflow-statements";
import { agentNodeOrThrow } from "./agent-node";
import { parseEventLog } from "./event-log";
import { policyForNode } from "./node-policy";
import { recordVerdict, type VerdictRow } from "./record-verdict";
import type { EvidenceInput } from "./schemas";
import { signingKeyOrThrow } from "./signing-key";
import { CONSUME_NONCE, LIVE_IDENTITY } from "./statements";
import { parseAttest, parseSignature, StructureError } from "./tpm-structures";
import { verifyEvidence } from "./verify-evidence";

/** Evidence that is not the structure it claims to be is a 400 naming the field: nothing is judged, no nonce spent. */
function assertWellFormed(input: EvidenceInput): void {
  const problems: Array<{ path: string; message: string }> = [];
  const check = (path: string, parse: () => unknown) => {
    try {
      parse();
    } catch (e) {
      if (!(e instanceof StructureError)) throw e;
      problems.push({ path, message: e.message });
    }
  };
  check("tpm.quote", () => parseAttest(input.tpm.quote));
  check("tpm.signature", () => parseSignature(input.tpm.signature));
  if (input.event_log) check("event_log", () => parseEventLog(input.event_log!));
  if (problems.length) throw validationFailed(problems, "The evidence is malformed");
}

/**
 * POST /api/nodes/{id}/attestation: the node's agent answers its nonce with a quote, the boot
 * event log and its reports. The nonce is used up, the evidence is judged by the pure verifier
 * against the node's pinned key and policy, and the verdict is signed and stored with the evidence,
 * all in one transaction. A failure is a verdict (201, result "fail"); malformed evidence is a 400.
 * When the node is being inspected by a handover or provisioning, the verdict is that workflow's,
 * and its runner is woken to act on it.
 */
export async function submitAttestation(actor: Actor, nodeId: string, input: EvidenceInput): Promise<VerdictRow> {
  assertWellFormed(input);
  const key = await signingKeyOrThrow(db());
  const verdict = await db().$transaction(async (tx) => {
    const node = await agentNodeOrThrow(tx, actor.principal, nodeId);
    const nonce = await runOne(tx, CONSUME_NONCE, [input.nonce, node.id]);
    const identity = await runOne(tx, LIVE_IDENTITY, [node.id]);
    const { policy } = await policyForNode(tx, node.id);
    const [running] = await run(tx, RUNNING_WORKFLOW_OF_NODE, [node.id]);
    const inspecting = node.status === "inspecting" || node.status_before_offline === "inspecting";
    const workflowId = running && inspecting && (!input.workflow_id || input.workflow_id === running.id) ? running.id : null;
    const now = nonce?.now ?? new Date();
    const v = verifyEvidence({
      nodeId: node.id,
      nonce: input.nonce,
      nonceRecord: nonce ? { nodeId: nonce.node_id, expiresAt: nonce.expires_at, usedAt: nonce.used_at } : null,
      identity: identity ? { akPublicPem: identity.ak_public_pem, akQualifiedName: identity.ak_qualified_name } : null,
      policy,
      evidence: {
        quote: input.tpm.quote,
        signature: input.tpm.signature,
        pcrs: input.tpm.pcrs,
        eventLog: input.event_log ?? null,
        wipeReport: input.wipe_report?.devices ?? null,
        gpuReports: input.gpu_reports ?? null,
      },
      now,
    });
    return recordVerdict(
      tx,
      key,
      {
        nodeId: node.id,
        workflowId,
        nonce: input.nonce,
        failures: v.failures,
        policy: v.policy,
        pcrDigest: v.pcrDigest,
        pcrs: v.pcrs,
        tpmKind: identity?.tpm_kind ?? null,
        akQualifiedName: identity?.ak_qualified_name ?? null,
        at: now,
      },
      {
        quote: input.tpm.quote,
        signature: input.tpm.signature,
        pcrs: input.tpm.pcrs,
        eventLog: input.event_log ?? null,
        wipeReport: input.wipe_report ?? null,
        gpuReports: input.gpu_reports ?? null,
      },
    );
  });
  if (verdict.workflow_id) await emitEvent("fleet/handover.requested", { reason: `attestation ${verdict.result}` });
  return verdict;
}
