import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { dockerStandin } from "./docker-standin";

const BASICS = [
  "sh",
  "dash",
  "bash",
  "curl",
  "tar",
  "gzip",
  "sha256sum",
  "openssl",
  "mktemp",
  "cut",
  "cat",
  "grep",
  "id",
  "uname",
  "mkdir",
  "rm",
  "mv",
  "ln",
  "chmod",
  "dirname",
  "head",
  "printf",
  "echo",
  "true",
  "sleep",
  "env",
];

/**
 * A GPU node's tools for tests of the installer and the real agent: an `nvidia-smi` that reports
 * two GPUs (as the agent queries them), a docker stand-in, and a `systemctl` that records its calls.
 * Any of them can be left out, to see the installer refuse.
 */
export function fakeNode(opts: { nvidiaSmi?: boolean; docker?: boolean | "engine-down"; systemctl?: boolean; gpuName?: string } = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "fake-node-"));
  const bin = path.join(dir, "bin");
  mkdirSync(bin);
  // the basics a minimal node has, and nothing of this machine's own (its docker client, say)
  const sys = path.join(dir, "sys");
  mkdirSync(sys);
  for (const name of BASICS) {
    const found = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"].map((d) => path.join(d, name)).find((p) => existsSync(p));
    if (found) symlinkSync(found, path.join(sys, name));
  }
  const tool = (name: string, body: string) => {
    writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(path.join(bin, name), 0o755);
  };
  const gpu = opts.gpuName ?? "NVIDIA GB200";
  const uuid = (i: number) => `GPU-${path.basename(dir).slice(-6)}-0000-4000-8000-00000000000${i}`;
  if (opts.nvidiaSmi !== false) {
    tool(
      "nvidia-smi",
      `case "$*" in
  *--query-gpu*) printf '0, ${uuid(0)}, ${gpu}, 189471, 1024, 3, 35, 120.5, 00000000:19:00.0, 565.57.01, Enabled, 0\\n1, ${uuid(1)}, ${gpu}, 189471, 0, 0, 33, 110.0, 00000000:3B:00.0, 565.57.01, Enabled, 0\\n' ;;
  *--query-remapped-rows*) printf '${uuid(0)}, 0\\n${uuid(1)}, 0\\n' ;;
  -L) printf 'GPU 0: ${gpu} (UUID: ${uuid(0)})\\nGPU 1: ${gpu} (UUID: ${uuid(1)})\\n' ;;
  *) printf '| NVIDIA-SMI 565.57.01              Driver Version: 565.57.01      CUDA Version: 12.7     |\\n' ;;
esac`,
    );
  }
  const docker =
    opts.docker === false ? undefined : dockerStandin(opts.docker === "engine-down" ? { noEngine: true, networks: {} } : { networks: {} });
  if (docker) tool("docker", `DOCKER_CONFIG="${docker.env.DOCKER_CONFIG}" exec "${docker.env.PATH!.split(":")[0]}/docker" "$@"`);
  const calls = path.join(dir, "systemctl.calls");
  if (opts.systemctl !== false) tool("systemctl", `echo "$*" >> "${calls}"`);
  return {
    bin,
    docker,
    /** PATH for the installer or the agent: the fake tools first, then the basics (sh, curl, tar, …) */
    path: `${bin}:${sys}`,
    /** what the docker stand-in needs to find its state */
    dockerConfig: docker?.env.DOCKER_CONFIG,
    systemctlCalls: () => (existsSync(calls) ? readFileSync(calls, "utf8").trim().split("\n") : []),
  };
}
