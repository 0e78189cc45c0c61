import { spawn } from "node:child_process";
import type { HandoverInstruction } from "../../lib/handover/schemas";
import { ApiError, type Client } from "./client";
import type { TpmIdentity, TpmQuote } from "./tpm";

// The agent's part in a handover between tenants, when its heartbeat says so:
//
//   wipe    once nothing of a tenant runs here any more: the cluster's wipe command, run on the
//           host by this agent (never by tenant code), with its time limit; then a reset of each
//           GPU (nvidia-smi -r -i N), which clears its memory where the GPU supports it. Each
//           device is one line of the report: what was done, when, and with what result. A
//           command may report devices of its own by printing lines
//             GPUFORGE-WIPE device=<name> result=ok|failed [message=<text>]
//           (one per disk it wiped, say); otherwise it is one line, "host".
//   attest  the TPM's attestation key enrolled (pinned by the control plane on first sight), a
//           fresh nonce taken, a quote over the PCRs it names, and the evidence sent: tpm2_quote's
//           quote and signature, the quoted PCRs, the firmware's boot event log, the wipe report
//           and what nvidia-smi says of each GPU's driver and VBIOS.
//
// Each step runs once per handover (workflow_id); a step that could not finish (the control plane
// unreachable, the TPM busy) is tried again on a later heartbeat.

export interface WipeDevice {
  device: string;
  method: string;
  started_at: string;
  finished_at: string;
  result: "ok" | "failed";
  message?: string;
}

export interface GpuReport {
  uuid: string;
  index: number;
  model?: string;
  driver_version: string;
  vbios_version?: string;
}

/** What the handover needs from the host: its TPM, its GPUs, and whether tenant work is still running. */
export interface HandoverHost {
  tpm: { identity(): Promise<TpmIdentity> | TpmIdentity; quote(nonce: string, pcrs: readonly number[]): Promise<TpmQuote> | TpmQuote };
  tpmKind: "tpm" | "swtpm" | "simulated";
  gpus(): Promise<Array<{ uuid: string; index: number }>>;
  /** resets one GPU, clearing its memory: null when done, else why not */
  resetGpu(index: number): Promise<string | null>;
  gpuReports(): Promise<GpuReport[]>;
  /** true once no tenant container runs here (the heartbeat's empty assignments were applied) */
  idle(): boolean;
  eventLog(): Buffer | null;
  /** runs the operator's wipe command (default: on the host, through /bin/sh) */
  runWipeCommand?(command: string, timeoutS: number): Promise<{ ok: boolean; output: string; timedOut: boolean }>;
}

const MAX_OUTPUT = 64 * 1024;

/** Runs the wipe command through /bin/sh with a time limit, keeping the last of its output. */
export function runShell(command: string, timeoutS: number): Promise<{ ok: boolean; output: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn("/bin/sh", ["-c", command], { stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    const keep = (b: Buffer) => (output = (output + b.toString("utf8")).slice(-MAX_OUTPUT));
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, timeoutS * 1000);
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ ok: false, output: e.message, timedOut: false });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ ok: code === 0 && !timedOut, output: output || `exit ${code}`, timedOut });
    });
  });
}

/** The devices a wipe command reports itself (GPUFORGE-WIPE lines), if any. */
export function parseWipeLines(output: string, started: string, finished: string, method: string): WipeDevice[] {
  const out: WipeDevice[] = [];
  for (const line of output.split("\n")) {
    const m = /^GPUFORGE-WIPE\s+device=(\S{1,200})\s+result=(ok|failed)(?:\s+message=(.*))?\s*$/.exec(line.trim());
    if (m)
      out.push({
        device: m[1]!,
        method,
        started_at: started,
        finished_at: finished,
        result: m[2] as "ok" | "failed",
        ...(m[3] ? { message: m[3].slice(0, 2000) } : {}),
      });
  }
  return out;
}

export class HandoverAgent {
  private readonly done = new Map<string, "wipe" | "attest">();
  private busy = false;
  /** the last wipe report, sent again with the evidence */
  private lastWipe: WipeDevice[] | null = null;

  constructor(
    private readonly client: Client,
    private readonly nodeId: string,
    private readonly host: HandoverHost,
    private readonly log: (m: string) => void,
  ) {}

  /** Acts on a heartbeat's handover instruction (at most one step at a time, each once per handover). */
  async onHeartbeat(h: HandoverInstruction | undefined): Promise<void> {
    if (!h || this.busy) return;
    const key = `${h.workflow_id}:${h.action}`;
    if (this.done.has(key)) return;
    this.busy = true;
    try {
      if (h.action === "wipe") {
        if (!this.host.idle()) {
          this.log("handover: waiting for the last tenant containers to stop before wiping");
          return;
        }
        await this.wipe(h);
      } else await this.attest(h);
      this.done.set(key, h.action);
    } catch (e) {
      this.log(`handover ${h.action} failed (trying again on the next heartbeat): ${(e as Error).message}`);
    } finally {
      this.busy = false;
    }
  }

  private async wipe(h: HandoverInstruction): Promise<void> {
    const devices: WipeDevice[] = [];
    const command = h.wipe?.command ?? null;
    if (command) {
      const started = new Date().toISOString();
      this.log(`handover: running the wipe command (limit ${h.wipe!.timeout_s} s)`);
      const r = this.host.runWipeCommand
        ? await this.host.runWipeCommand(command, h.wipe!.timeout_s)
        : await runShell(command, h.wipe!.timeout_s);
      const finished = new Date().toISOString();
      const own = parseWipeLines(r.output, started, finished, command);
      if (own.length)
        devices.push(...own.map((d) => (r.ok ? d : { ...d, result: "failed" as const, message: d.message ?? "the wipe command failed" })));
      if (!own.length || !r.ok)
        devices.push({
          device: "host",
          method: command,
          started_at: started,
          finished_at: finished,
          result: r.ok ? "ok" : "failed",
          ...(r.ok
            ? {}
            : {
                message: r.timedOut
                  ? `timed out after ${h.wipe!.timeout_s} s`
                  : r.output.trim().split("\n").slice(-3).join(" | ").slice(0, 2000),
              }),
        });
    }
    for (const g of await this.host.gpus()) {
      const started = new Date().toISOString();
      const problem = await this.host.resetGpu(g.index);
      devices.push({
        device: g.uuid,
        method: `nvidia-smi -r -i ${g.index}`,
        started_at: started,
        finished_at: new Date().toISOString(),
        result: problem ? "failed" : "ok",
        ...(problem ? { message: problem } : {}),
      });
    }
    if (devices.length === 0)
      devices.push({
        device: "host",
        method: "none: no wipe command and no GPU",
        started_at: new Date().toISOString(),
        finished_at: new Date().toISOString(),
        result: "ok",
      });
    this.lastWipe = devices;
    await this.client.call("POST", h.report_path ?? `/api/nodes/${this.nodeId}/wipe`, { workflow_id: h.workflow_id, devices }, 120_000);
    this.log(`handover: wipe reported (${devices.filter((d) => d.result !== "ok").length} device(s) failed of ${devices.length})`);
  }

  private async attest(h: HandoverInstruction): Promise<void> {
    const paths = h.attest ?? {
      identity_path: `/api/nodes/${this.nodeId}/attestation/identity`,
      nonce_path: `/api/nodes/${this.nodeId}/attestation/nonce`,
      evidence_path: `/api/nodes/${this.nodeId}/attestation`,
    };
    const identity = await this.host.tpm.identity();
    try {
      await this.client.call("POST", paths.identity_path, { ...identity, tpm_kind: this.host.tpmKind }, 60_000);
    } catch (e) {
      // another key is pinned: the evidence is sent anyway, and fails on its signature for everyone to see
      if (!(e instanceof ApiError && e.status === 409)) throw e;
      this.log("handover: the control plane has another attestation key pinned for this node; an operator must re-enrol it");
    }
    const n = await this.client.call<{ nonce: string; pcrs: number[] }>("POST", paths.nonce_path, undefined, 60_000);
    const q = await this.host.tpm.quote(n.nonce, n.pcrs);
    const log = this.host.eventLog();
    const gpus = await this.host.gpuReports().catch(() => []);
    const verdict = await this.client.call<{ attestation: { result: string; failures: Array<{ code: string }> } }>(
      "POST",
      paths.evidence_path,
      {
        nonce: n.nonce,
        workflow_id: h.workflow_id,
        tpm: { quote: q.quote.toString("base64"), signature: q.signature.toString("base64"), pcrs: q.pcrs },
        ...(log ? { event_log: log.toString("base64") } : {}),
        ...(this.lastWipe ? { wipe_report: { devices: this.lastWipe } } : {}),
        ...(gpus.length ? { gpu_reports: gpus } : {}),
      },
      120_000,
    );
    const a = verdict.attestation;
    this.log(`handover: attestation ${a.result}${a.failures.length ? ` (${a.failures.map((f) => f.code).join(", ")})` : ""}`);
  }
}
