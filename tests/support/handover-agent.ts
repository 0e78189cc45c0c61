import { parseEventLog, replay } from "@/lib/attestation/event-log";
import { enrolIdentity } from "@/lib/attestation/enrol-identity";
import { issueNonce } from "@/lib/attestation/issue-nonce";
import { createPolicy } from "@/lib/attestation/create-policy";
import { referencePolicyFromLog, type PolicyBody } from "@/lib/attestation/policy";
import { submitAttestation } from "@/lib/attestation/submit-attestation";
import { db } from "@/lib/db/client";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { advanceHandovers } from "@/lib/handover/run-handovers";
import { recordWipeReport } from "@/lib/handover/record-wipe-report";
import { putHandoverSettings } from "@/lib/handover/settings";
import { bootEventLog, measureBoot, type BootOptions } from "../../agent/src/sim-boot";
import { SimulatedTpm } from "../../agent/src/sim-tpm";
import { actorFor, agentPrincipal, operatorPrincipal, unique } from "./fixtures";
import { tempDir } from "./temp-dir";

// A node's agent in a handover, driven through the services the way the real agent drives the
// API: it wipes when its heartbeat says so and reports each device, and attests with a TPM
// (the simulated one here; tests/unit/attestation-swtpm and the simulator run a real swtpm).

export const operator = actorFor(operatorPrincipal);

/** A policy from a clean simulated boot (what an operator captures from a node it trusts), named uniquely. */
export function goldenPolicyBody(require: PolicyBody["require"] = ["event_log", "wipe_report"]): PolicyBody {
  const log = parseEventLog(bootEventLog());
  return referencePolicyFromLog(log, replay(log), { require });
}

/** The cluster attests against a fresh golden policy and wipes with a command. */
export async function attestedCluster(
  clusterId: string,
  o: { wipeCommand?: string | null; wipeTimeoutS?: number; attestationTimeoutS?: number } = {},
) {
  const policy = await createPolicy(operator, { name: unique("golden"), description: "clean boot", ...goldenPolicyBody() });
  await putHandoverSettings(operator, clusterId, {
    wipe_command: o.wipeCommand === undefined ? "blkdiscard -f /dev/nvme1n1" : o.wipeCommand,
    wipe_timeout_s: o.wipeTimeoutS ?? 1800,
    attestation: "required",
    attestation_policy_id: policy.id,
    attestation_timeout_s: o.attestationTimeoutS ?? 600,
  });
  return policy;
}

export class FakeNodeAgent {
  readonly tpm: SimulatedTpm;
  boot: BootOptions = {};
  /** what the next wipe report says of each device (default: all ok) */
  wipeFails: string[] = [];
  attested = 0;
  wiped = 0;

  constructor(
    readonly clusterId: string,
    readonly nodeId: string,
    readonly gpuUuids: string[],
  ) {
    this.tpm = new SimulatedTpm(tempDir("handover-tpm-"));
  }

  get actor() {
    return actorFor(agentPrincipal(this.clusterId));
  }

  /** A heartbeat and whatever handover step it asks for. */
  async tick(): Promise<string | undefined> {
    const beat = await recordHeartbeat(this.actor, this.nodeId, {});
    const h = beat.handover;
    if (h?.action === "wipe") {
      const at = new Date().toISOString();
      await recordWipeReport(this.actor, this.nodeId, {
        workflow_id: h.workflow_id,
        devices: [
          ...(h.wipe?.command
            ? [
                {
                  device: "nvme1n1",
                  method: h.wipe.command,
                  started_at: at,
                  finished_at: at,
                  result: this.wipeFails.includes("nvme1n1") ? ("failed" as const) : ("ok" as const),
                  ...(this.wipeFails.includes("nvme1n1") ? { message: "device busy" } : {}),
                },
              ]
            : []),
          ...this.gpuUuids.map((uuid) => ({
            device: uuid,
            method: "nvidia-smi -r",
            started_at: at,
            finished_at: at,
            result: this.wipeFails.includes(uuid) ? ("failed" as const) : ("ok" as const),
            ...(this.wipeFails.includes(uuid) ? { message: "GPU is in use" } : {}),
          })),
        ],
      });
      this.wiped++;
    }
    if (h?.action === "attest") {
      await this.attest(h.workflow_id);
      this.attested++;
    }
    return h?.action;
  }

  /** Boots (the PCRs measured afresh), enrols, takes a nonce and sends the evidence. */
  async attest(workflowId?: string) {
    this.tpm.reboot();
    const log = await measureBoot(this.tpm, this.boot);
    await enrolIdentity(this.actor, this.nodeId, { ...this.tpm.identity(), tpm_kind: "simulated" });
    const n = await issueNonce(this.actor, this.nodeId);
    const q = this.tpm.quote(n.nonce, n.pcrs);
    const at = new Date().toISOString();
    return submitAttestation(this.actor, this.nodeId, {
      nonce: n.nonce,
      ...(workflowId ? { workflow_id: workflowId } : {}),
      tpm: { quote: q.quote, signature: q.signature, pcrs: q.pcrs },
      event_log: log,
      wipe_report: {
        devices: this.gpuUuids.map((uuid) => ({
          device: uuid,
          method: "nvidia-smi -r",
          started_at: at,
          finished_at: at,
          result: "ok" as const,
        })),
      },
    });
  }
}

/** Runs the node's handover (the runner and its agent in turn) until it ends; answers the node's status. */
export async function driveHandover(agent: FakeNodeAgent, maxRounds = 12): Promise<string> {
  for (let i = 0; i < maxRounds; i++) {
    await advanceHandovers({ nodeIds: [agent.nodeId] });
    const w = await db().nodeWorkflow.findFirst({ where: { nodeId: agent.nodeId, status: "running" } });
    if (!w) break;
    await agent.tick();
  }
  return (await db().node.findUniqueOrThrow({ where: { id: agent.nodeId }, select: { status: true } })).status;
}
