import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEventLog, replay } from "@/lib/attestation/event-log";
import { referencePolicyFromLog } from "@/lib/attestation/policy";
import { evidenceBody, wipeReportBody } from "@/lib/attestation/schemas";
import { verifyEvidence } from "@/lib/attestation/verify-evidence";
import type { HandoverInstruction } from "@/lib/handover/schemas";
import { HandoverAgent, parseWipeLines, runShell, type HandoverHost } from "../../agent/src/handover";
import { bootEventLog, measureBoot } from "../../agent/src/sim-boot";
import { startSwtpm, type RunningSwtpm } from "../../agent/src/swtpm";
import { Tpm2Tools } from "../../agent/src/tpm";
import { ensureSystemTool } from "../support/system-packages";
import { tempDir } from "../support/temp-dir";

// The agent's half of a handover (agent/src/handover.ts) against a real software TPM and a real
// shell: the operator's wipe command run on the host with its time limit, each GPU reset, one
// report line per device; then the attestation: key enrolled, nonce taken, tpm2_quote's evidence
// sent, in that order, in the shapes the control plane's API accepts, and judged good by its
// verifier. The control plane is a stand-in that records calls and answers as the API does.

ensureSystemTool("swtpm", "tpm2Tools");

const NODE = "3f0c4a22-1b9e-4c55-8d7a-9a0c2f1e5b77";
const WORKFLOW = "a1a1a1a1-2b2b-4c3c-8d4d-5e5e5e5e5e5e";

class StandIn {
  calls: Array<{ method: string; path: string; body: unknown }> = [];
  nonce = Buffer.alloc(32, 9).toString("hex");
  call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    this.calls.push({ method, path, body });
    if (path.endsWith("/nonce"))
      return {
        nonce: this.nonce,
        expires_at: new Date(Date.now() + 60_000).toISOString(),
        pcr_bank: "sha256",
        pcrs: [0, 1, 2, 3, 4, 5, 6, 7],
      } as T;
    if (path.endsWith("/attestation")) return { attestation: { result: "pass", failures: [] } } as T;
    return {} as T;
  };
}

let swtpm: RunningSwtpm;
let tools: Tpm2Tools;
let log: Buffer;
let dir: string;

beforeAll(async () => {
  dir = tempDir("agent-handover-");
  swtpm = await startSwtpm(path.join(dir, "tpm-state"));
  tools = new Tpm2Tools({ workDir: path.join(dir, "work"), tcti: swtpm.tcti });
  log = await measureBoot(tools);
});
afterAll(async () => swtpm?.stop());

function host(o: Partial<HandoverHost> = {}): HandoverHost {
  return {
    tpm: tools,
    tpmKind: "swtpm",
    gpus: async () => [
      { uuid: "GPU-aaa", index: 0 },
      { uuid: "GPU-bbb", index: 1 },
    ],
    resetGpu: async (i) => (i === 1 && o.tpmKind === "tpm" ? "GPU reset is not supported on this GPU" : null),
    gpuReports: async () => [{ uuid: "GPU-aaa", index: 0, driver_version: "560.35.03", vbios_version: "96.00.99.00.01" }],
    idle: () => true,
    eventLog: () => log,
    ...o,
  };
}

const wipe = (command: string | null, timeoutS = 30): HandoverInstruction => ({
  workflow_id: WORKFLOW,
  action: "wipe",
  wipe: { command, timeout_s: timeoutS },
  report_path: `/api/nodes/${NODE}/wipe`,
});
const attest: HandoverInstruction = { workflow_id: WORKFLOW, action: "attest" };

describe("the agent's handover", () => {
  it("runs the wipe command on the host, takes the devices it reports, resets each GPU, and posts one line per device", async () => {
    const cp = new StandIn();
    const agent = new HandoverAgent({ call: cp.call }, NODE, host(), () => {});
    await agent.onHeartbeat(
      wipe(`echo "GPUFORGE-WIPE device=nvme0n1 result=ok"; echo "GPUFORGE-WIPE device=nvme1n1 result=failed message=secure erase refused"`),
    );
    const report = cp.calls.find((c) => c.path.endsWith("/wipe"))!;
    const body = wipeReportBody.parse(report.body);
    expect(body.workflow_id).toBe(WORKFLOW);
    expect(body.devices.map((d) => [d.device, d.result, d.method.slice(0, 14)])).toEqual([
      ["nvme0n1", "ok", 'echo "GPUFORGE'],
      ["nvme1n1", "failed", 'echo "GPUFORGE'],
      ["GPU-aaa", "ok", "nvidia-smi -r "],
      ["GPU-bbb", "ok", "nvidia-smi -r "],
    ]);
    expect(body.devices[1]!.message).toBe("secure erase refused");
    // once per handover: the next heartbeat's same instruction does nothing
    await agent.onHeartbeat(wipe("true"));
    expect(cp.calls.filter((c) => c.path.endsWith("/wipe"))).toHaveLength(1);
  });

  it("a failing or overrunning wipe command is a failed line naming why; it never waits past its limit", async () => {
    const cp = new StandIn();
    await new HandoverAgent({ call: cp.call }, NODE, host(), () => {}).onHeartbeat(wipe("echo 'wiping'; echo 'disk locked' >&2; exit 3"));
    const failed = wipeReportBody.parse(cp.calls[0]!.body).devices[0]!;
    expect(failed).toMatchObject({ device: "host", result: "failed" });
    expect(failed.message).toContain("disk locked");
    const started = Date.now();
    const r = await runShell("sleep 30", 1);
    expect(r).toMatchObject({ ok: false, timedOut: true });
    expect(Date.now() - started).toBeLessThan(10_000);
    const cp2 = new StandIn();
    await new HandoverAgent(
      { call: cp2.call },
      NODE,
      host({ runWipeCommand: async () => ({ ok: false, output: "", timedOut: true }) }),
      () => {},
    ).onHeartbeat(wipe("x", 42));
    expect(wipeReportBody.parse(cp2.calls[0]!.body).devices[0]).toMatchObject({ result: "failed", message: "timed out after 42 s" });
  });

  it("a GPU whose reset is not supported is reported as not wiped, with the reason", async () => {
    const cp = new StandIn();
    await new HandoverAgent({ call: cp.call }, NODE, host({ tpmKind: "tpm" }), () => {}).onHeartbeat(wipe(null));
    const devices = wipeReportBody.parse(cp.calls[0]!.body).devices;
    expect(devices.map((d) => [d.device, d.result])).toEqual([
      ["GPU-aaa", "ok"],
      ["GPU-bbb", "failed"],
    ]);
    expect(devices[1]!.message).toContain("not supported");
  });

  it("waits for the last tenant containers to stop before wiping", async () => {
    const cp = new StandIn();
    let idle = false;
    const agent = new HandoverAgent({ call: cp.call }, NODE, host({ idle: () => idle }), () => {});
    await agent.onHeartbeat(wipe("true"));
    expect(cp.calls).toHaveLength(0);
    idle = true;
    await agent.onHeartbeat(wipe("true"));
    expect(cp.calls).toHaveLength(1);
  });

  it("attests: enrols its TPM's key, takes a nonce, and sends evidence the API accepts and the verifier passes", async () => {
    const cp = new StandIn();
    const agent = new HandoverAgent({ call: cp.call }, NODE, host(), () => {});
    await agent.onHeartbeat(wipe(null));
    await agent.onHeartbeat(attest);
    expect(cp.calls.map((c) => c.path)).toEqual([
      `/api/nodes/${NODE}/wipe`,
      `/api/nodes/${NODE}/attestation/identity`,
      `/api/nodes/${NODE}/attestation/nonce`,
      `/api/nodes/${NODE}/attestation`,
    ]);
    const identity = cp.calls[1]!.body as { ak_public_pem: string; ak_qualified_name: string; tpm_kind: string };
    expect(identity.tpm_kind).toBe("swtpm");
    const evidence = evidenceBody.parse(cp.calls[3]!.body);
    expect(evidence).toMatchObject({ nonce: cp.nonce, workflow_id: WORKFLOW });
    expect(evidence.wipe_report!.devices).toHaveLength(2);
    const parsed = parseEventLog(bootEventLog());
    const v = verifyEvidence({
      nodeId: NODE,
      nonce: evidence.nonce,
      nonceRecord: { nodeId: NODE, expiresAt: new Date(Date.now() + 60_000), usedAt: null },
      identity: { akPublicPem: identity.ak_public_pem, akQualifiedName: identity.ak_qualified_name },
      policy: {
        id: "p",
        name: "golden",
        version: 1,
        body: referencePolicyFromLog(parsed, replay(parsed), { require: ["event_log", "wipe_report"] }),
      },
      evidence: {
        quote: evidence.tpm.quote,
        signature: evidence.tpm.signature,
        pcrs: evidence.tpm.pcrs,
        eventLog: evidence.event_log ?? null,
        wipeReport: evidence.wipe_report?.devices ?? null,
        gpuReports: evidence.gpu_reports ?? null,
      },
      now: new Date(),
    });
    expect(v.failures).toEqual([]);
  });

  it("an attestation that could not be sent is tried again on a later heartbeat", async () => {
    const cp = new StandIn();
    let down = true;
    const agent = new HandoverAgent(
      {
        call: async <T>(m: string, p: string, b?: unknown) =>
          down ? Promise.reject(new Error("connect ECONNREFUSED")) : cp.call<T>(m, p, b),
      },
      NODE,
      host(),
      () => {},
    );
    await agent.onHeartbeat(attest);
    expect(cp.calls).toHaveLength(0);
    down = false;
    await agent.onHeartbeat(attest);
    expect(cp.calls.map((c) => c.path.split("/").pop())).toEqual(["identity", "nonce", "attestation"]);
  });

  it("reads the wipe command's device lines, ignoring anything else it prints", () => {
    expect(parseWipeLines("noise\nGPUFORGE-WIPE device=sda result=ok\nGPUFORGE-WIPE device=sdb result=maybe\n", "a", "b", "cmd")).toEqual([
      { device: "sda", method: "cmd", started_at: "a", finished_at: "b", result: "ok" },
    ]);
  });
});
