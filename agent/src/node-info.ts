// What the agent tells the control plane about its node at registration: the OS, the kernel, the
// driver and CUDA versions, whether it runs containers, and the address it is reached at.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import { promisify } from "node:util";
import { parseSmiHeader } from "./nvidia-smi";

const run = promisify(execFile);

/** PRETTY_NAME of /etc/os-release, e.g. "Ubuntu 22.04.4 LTS". */
export function parseOsRelease(text: string): string | null {
  const m = /^PRETTY_NAME=(?:"([^"]*)"|(.*))$/m.exec(text);
  return (m?.[1] ?? m?.[2])?.trim() || null;
}

export async function readSystem(
  nvidiaSmi: string,
): Promise<{ os?: string; kernel?: string; driver_version?: string; cuda_version?: string }> {
  let osName: string | null = null;
  try {
    osName = parseOsRelease(readFileSync("/etc/os-release", "utf8"));
  } catch {
    osName = `${os.type()} ${os.release()}`;
  }
  let versions: { driverVersion: string | null; cudaVersion: string | null } = { driverVersion: null, cudaVersion: null };
  try {
    versions = parseSmiHeader((await run(nvidiaSmi, [], { timeout: 20_000 })).stdout);
  } catch {
    // the per-GPU query still says the driver version
  }
  return {
    ...(osName ? { os: osName.slice(0, 200) } : {}),
    kernel: os.release().slice(0, 200),
    ...(versions.driverVersion ? { driver_version: versions.driverVersion } : {}),
    ...(versions.cudaVersion ? { cuda_version: versions.cudaVersion } : {}),
  };
}

/**
 * The address the fleet reaches this node at (GPUFORGE_NODE_ADDRESS, else the first IPv4 address of
 * a physical-looking interface): tenants' SSH commands name it and the inference gateway connects to
 * published ports there. Container bridges (docker0, br-…, veth…) are never it.
 */
export function detectNodeAddress(configured: string | undefined, interfaces = os.networkInterfaces()): string | undefined {
  if (configured?.trim()) return configured.trim();
  for (const [name, addrs] of Object.entries(interfaces)) {
    if (/^(docker|br-|veth|virbr|cni|flannel|cali|lo)/.test(name)) continue;
    const v4 = (addrs ?? []).find((a) => a.family === "IPv4" && !a.internal && !a.address.startsWith("169.254."));
    if (v4) return v4.address;
  }
  return undefined;
}
