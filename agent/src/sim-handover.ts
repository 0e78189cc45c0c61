import path from "node:path";
import type { HandoverInstruction } from "../../lib/handover/schemas";
import type { Client } from "./client";
import { HandoverAgent, type HandoverHost } from "./handover";
import { measureBoot } from "./sim-boot";
import { SimulatedTpm } from "./sim-tpm";
import { startSwtpm, swtpmAvailable } from "./swtpm";
import { Tpm2Tools, type TpmIdentity, type TpmQuote } from "./tpm";

// Simulated nodes' handovers: the same agent code (agent/src/handover.ts) as a real node, over a
// simulated host. Its wipe takes SIM_WIPE_S seconds and reports each GPU reset; its TPM is a real
// software TPM per node (swtpm, started for each attestation over the node's own TPM state, so its
// attestation key persists) when swtpm is installed and the fleet is small enough for one process
// per node, otherwise the simulated TPM, which enrols as tpm_kind "simulated" and says so on every
// verdict. Each boot measures the simulated firmware's events into the TPM; the `implant` fault
// boots a bootkit before the kernel (the attestation must fail), `wipe_fail` fails a GPU's reset.

export interface SimHandoverOptions {
  stateDir: string;
  /** how long a simulated wipe takes */
  wipeS: number;
  /** swtpm for every node, none, or (auto) when installed and the fleet has at most 64 nodes */
  tpm: "swtpm" | "simulated" | "auto";
  fleetSize: number;
  log: (m: string) => void;
}

export const SIM_DRIVER_VERSION = "560.35.03";
export const SIM_VBIOS_VERSION = "96.00.99.00.01";

/** At most this many software TPMs run at once (each attestation starts one for a second or so). */
const SWTPM_AT_ONCE = 4;
let swtpmSlots = SWTPM_AT_ONCE;
const swtpmQueue: Array<() => void> = [];
async function withSwtpmSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (swtpmSlots === 0) await new Promise<void>((r) => swtpmQueue.push(r));
  else swtpmSlots--;
  try {
    return await fn();
  } finally {
    const next = swtpmQueue.shift();
    if (next) next();
    else swtpmSlots++;
  }
}

export interface SimHandoverNode {
  hostname: string;
  id?: string;
  client: Client;
  gpus: Array<{ uuid: string; index: number }>;
  /** nothing of a tenant runs on it */
  idle(): boolean;
}

export class SimHandovers {
  private readonly agents = new Map<string, HandoverAgent>();
  private readonly faults = new Map<string, { implant?: boolean; wipeFail?: boolean }>();
  readonly useSwtpm: boolean;

  constructor(private readonly opts: SimHandoverOptions) {
    this.useSwtpm = opts.tpm === "swtpm" || (opts.tpm === "auto" && opts.fleetSize <= 64 && swtpmAvailable());
  }

  get tpmKind(): "swtpm" | "simulated" {
    return this.useSwtpm ? "swtpm" : "simulated";
  }

  setFault(hostname: string, fault: "implant" | "wipe_fail" | "clear") {
    const f = this.faults.get(hostname) ?? {};
    if (fault === "implant") f.implant = true;
    if (fault === "wipe_fail") f.wipeFail = true;
    if (fault === "clear") {
      f.implant = false;
      f.wipeFail = false;
    }
    this.faults.set(hostname, f);
  }

  async onHeartbeat(n: SimHandoverNode, h: HandoverInstruction | undefined): Promise<void> {
    if (!h || !n.id) return;
    let agent = this.agents.get(n.hostname);
    if (!agent)
      this.agents.set(n.hostname, (agent = new HandoverAgent(n.client, n.id, this.host(n), (m) => this.opts.log(`${n.hostname}: ${m}`))));
    await agent.onHeartbeat(h);
  }

  private host(n: SimHandoverNode): HandoverHost {
    const dir = path.join(this.opts.stateDir, n.hostname);
    const fault = () => this.faults.get(n.hostname) ?? {};
    const simulated = this.useSwtpm ? null : new SimulatedTpm(path.join(dir, "simulated-tpm"));
    let lastLog: Buffer | null = null;
    let identity: TpmIdentity | undefined;
    /** Boots the node's TPM (its PCRs from zero, the simulated firmware measured into them) and uses it. */
    const booted = async <T>(
      use: (tpm: { identity(): Promise<TpmIdentity>; quote(nonce: string, pcrs: readonly number[]): Promise<TpmQuote> }) => Promise<T>,
    ): Promise<T> => {
      if (simulated) {
        simulated.reboot();
        lastLog = await measureBoot(simulated, { implant: fault().implant });
        return use({ identity: async () => simulated.identity(), quote: async (nonce, pcrs) => simulated.quote(nonce, pcrs) });
      }
      return withSwtpmSlot(async () => {
        const swtpm = await startSwtpm(path.join(dir, "swtpm-state"));
        try {
          const tools = new Tpm2Tools({ workDir: path.join(dir, "swtpm-work"), tcti: swtpm.tcti });
          lastLog = await measureBoot(tools, { implant: fault().implant });
          return await use(tools);
        } finally {
          await swtpm.stop();
        }
      });
    };
    const wipeS = this.opts.wipeS;
    return {
      tpmKind: this.tpmKind,
      tpm: {
        // the attestation key persists in the TPM's state: read once
        identity: async () => (identity ??= await booted((t) => t.identity())),
        quote: (nonce, pcrs) => booted((t) => t.quote(nonce, pcrs)),
      },
      gpus: async () => n.gpus,
      async resetGpu(index) {
        await new Promise((r) => setTimeout(r, (wipeS * 1000) / Math.max(1, n.gpus.length)));
        return fault().wipeFail && index === n.gpus.length - 1
          ? "GPU reset failed: the GPU is still in use by a process (simulated fault)"
          : null;
      },
      gpuReports: async () =>
        n.gpus.map((g) => ({ uuid: g.uuid, index: g.index, driver_version: SIM_DRIVER_VERSION, vbios_version: SIM_VBIOS_VERSION })),
      idle: () => n.idle(),
      // the firmware's log of the boot the quote was made in: what measureBoot extended into the TPM
      eventLog: () => lastLog,
      runWipeCommand: async (command) => ({
        ok: true,
        output: `simulated: ${command}\nGPUFORGE-WIPE device=nvme0n1 result=ok\nGPUFORGE-WIPE device=nvme1n1 result=ok\n`,
        timedOut: false,
      }),
    };
  }
}
