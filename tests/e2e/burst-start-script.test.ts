import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { systemActor } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { startScript } from "@/lib/providers/start-script";
import { E2E_BUNDLE_PUBLIC_KEY } from "../support/bundle-signing-key";
import { fakeNode } from "../support/fake-node";
import { makeCluster, unique } from "../support/fixtures";

// A burst instance's start script, for real, on a "container instance" (RunPod's and Vast.ai's
// are containers: nvidia-smi, but no docker and no systemd): it fetches this control plane's
// one-line installer, installs the self-contained agent with the node-bound key the launch gave it
// (--allow-no-containers, --no-start), removes the key file, and becomes the agent, which
// registers its one node and heartbeats it into service — without containers.

let agent: ChildProcess | undefined;
afterAll(() => {
  agent?.kill("SIGKILL");
});

describe("the burst start script", () => {
  it("installs and starts our agent on an instance without docker or systemd, and the node joins with its node-bound key", async () => {
    const cluster = await makeCluster();
    const hostname = unique("runpod").toLowerCase();
    const node = await db().node.create({ data: { clusterId: cluster.id, hostname, status: "registered" } });
    const { key } = await createApiKey(systemActor, {
      name: `burst ${hostname}`,
      scope: "agent",
      cluster_id: cluster.id,
      node_id: node.id,
    });
    const tools = fakeNode({ docker: false, systemctl: false, gpuName: "NVIDIA H100 80GB HBM3" });
    const root = mkdtempSync(path.join(os.tmpdir(), "burst-root-"));
    const file = path.join(root, "start.sh");
    // the installer checks the bundle against the key the app signs with, as a launch hands it over
    writeFileSync(file, startScript(E2E_BUNDLE_PUBLIC_KEY));
    let output = "";
    agent = spawn("sh", [file], {
      env: {
        PATH: tools.path,
        HOME: root,
        GPUFORGE_URL: inject("baseUrl"),
        GPUFORGE_AGENT_KEY: key,
        GPUFORGE_HOSTNAME: hostname,
        GPUFORGE_INSTALL_ROOT: root,
        HEARTBEAT_INTERVAL_S: "1",
        METRICS_INTERVAL_S: "1",
      } as unknown as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    agent.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    agent.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    let joined: { status: string; containers: boolean; _count: { gpus: number } } | null = null;
    for (let i = 0; i < 300 && joined?.status !== "available"; i++) {
      joined = await db().node.findUnique({
        where: { id: node.id },
        select: { status: true, containers: true, _count: { select: { gpus: true } } },
      });
      if (joined?.status !== "available") await new Promise((r) => setTimeout(r, 200));
    }
    expect(joined, output).toMatchObject({ status: "available", containers: false, _count: { gpus: 2 } });
    // the key went into the agent's 0600 configuration; the file the script wrote it to is gone
    expect(existsSync(path.join(root, "root/.gpuforge-agent.key"))).toBe(false);
    expect(statSync(path.join(root, "etc/gpuforge/agent.env")).mode & 0o777).toBe(0o600);
    expect(output).toMatch(/registered .* as node/);
  });
});
