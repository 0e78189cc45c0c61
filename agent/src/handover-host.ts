import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import type { Client } from "./client";
import { HandoverAgent, type GpuReport, type HandoverHost } from "./handover";
import { readBootEventLog, Tpm2Tools } from "./tpm";

// The real host behind a node's handover (agent/src/handover.ts): its TPM through tpm2-tools (the
// kernel's resource manager, or GPUFORGE_TPM_TCTI), its GPUs through nvidia-smi, and the firmware's
// boot event log as the kernel exposes it (GPUFORGE_EVENT_LOG to read another file).

const exec = promisify(execFile);

export function hostHandover(o: {
  client: Client;
  nodeId: string;
  stateDir: string;
  nvidiaSmi: string;
  gpus: () => Array<{ uuid: string; index: number }>;
  idle: () => boolean;
  log: (m: string) => void;
  env?: NodeJS.ProcessEnv;
}): HandoverAgent {
  const env = o.env ?? process.env;
  const tpm = new Tpm2Tools({
    workDir: path.join(o.stateDir, "tpm"),
    tcti: env.GPUFORGE_TPM_TCTI || undefined,
    akHandle: env.GPUFORGE_TPM_AK_HANDLE || undefined,
  });
  const host: HandoverHost = {
    tpm,
    tpmKind: env.GPUFORGE_TPM_TCTI?.startsWith("swtpm") ? "swtpm" : "tpm",
    gpus: async () => o.gpus(),
    async resetGpu(index) {
      try {
        await exec(o.nvidiaSmi, ["-r", "-i", String(index)], { timeout: 120_000 });
        return null;
      } catch (e) {
        const err = e as Error & { stdout?: string; stderr?: string };
        const said = `${err.stdout ?? ""}${err.stderr ?? ""}`.trim().split("\n").slice(-2).join(" ") || err.message;
        return /not supported/i.test(said)
          ? `GPU reset is not supported on this GPU: its memory was not cleared (${said})`
          : said.slice(0, 2000);
      }
    },
    async gpuReports(): Promise<GpuReport[]> {
      const { stdout } = await exec(
        o.nvidiaSmi,
        ["--query-gpu=uuid,index,name,driver_version,vbios_version", "--format=csv,noheader,nounits"],
        { timeout: 20_000 },
      );
      return stdout
        .split("\n")
        .map((l) => l.split(",").map((x) => x.trim()))
        .filter((f) => f.length >= 5 && f[0])
        .map(([uuid, index, model, driver, vbios]) => ({
          uuid: uuid!,
          index: Number(index),
          model,
          driver_version: driver!,
          ...(vbios && vbios !== "[N/A]" ? { vbios_version: vbios } : {}),
        }));
    },
    idle: o.idle,
    eventLog: () => readBootEventLog(env.GPUFORGE_EVENT_LOG || undefined),
  };
  return new HandoverAgent(o.client, o.nodeId, host, o.log);
}
