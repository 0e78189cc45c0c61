import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { AGENT_VERSION } from "@/agent/src/version";
import { verifyBundle } from "@/lib/agent-install/bundle-signing";
import { db } from "@/lib/db/client";
import { startSlurmSandbox, type SlurmSandbox } from "../../scripts/lib/slurm-sandbox";
import { E2E_BUNDLE_PUBLIC_KEY } from "../support/bundle-signing-key";
import { fakeNode } from "../support/fake-node";
import { makeKey, makeTenant, unique } from "../support/fixtures";
import { api } from "../support/http";
import { eventually } from "../support/slurm-bridge";
import { ensureSystemTool } from "../support/system-packages";

// `install.sh --slurm-bridge`, for real: the control plane serves the bridge's bundle beside the
// agent's (same route, Ed25519 signature and layout), the script refuses a host where Slurm is not usable,
// installs into a temporary root, and the installed bridge (its bundled Node.js, not this
// checkout) mirrors a real Slurm and runs a tenant's job there inside its image.

let script: string;
let clusterId: string;
let agentKey: string;
let slurm: SlurmSandbox | undefined;
let bridge: ChildProcess | undefined;
const roots: string[] = [];
const SLURM_TOOLS = ["sinfo", "scontrol", "squeue", "sbatch", "scancel", "srun"];
const ARCH = os.arch() === "x64" ? "x86_64" : "aarch64";

beforeAll(async () => {
  script = await (await fetch(`${inject("baseUrl")}/install.sh`)).text();
  const operatorKey = (await makeKey({ scope: "operator" })).key;
  const created = await api("POST", "/api/clusters", { key: operatorKey, body: { name: unique("slurm-installed"), kind: "slurm" } });
  clusterId = created.body.cluster.id;
  agentKey = (await makeKey({ scope: "agent", cluster_id: clusterId })).key;
});

afterAll(async () => {
  bridge?.kill("SIGKILL");
  await slurm?.stop();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

const tempRoot = () => {
  const r = mkdtempSync(path.join(os.tmpdir(), "bridge-root-"));
  roots.push(r);
  return r;
};

/** A login node's tools: the basics, systemctl recording its calls, and Slurm's client tools (stand-ins unless `real`). */
function loginNode(o: { slurm?: "up" | "down" | "none" | "real" } = {}) {
  const node = fakeNode({ nvidiaSmi: false, docker: false });
  const mode = o.slurm ?? "up";
  if (mode === "up" || mode === "down")
    for (const t of SLURM_TOOLS) {
      const body =
        t === "scontrol" ? `[ "$1" = ping ] && echo "Slurmctld(primary) at ctl is ${mode === "up" ? "UP" : "DOWN"}"; exit 0` : "exit 0";
      writeFileSync(path.join(node.bin, t), `#!/bin/sh\n${body}\n`);
      chmodSync(path.join(node.bin, t), 0o755);
    }
  // the real tools (Debian installs them in /usr/bin) after the stand-ins
  return { ...node, path: mode === "real" ? `${node.path}:/usr/bin:/bin` : node.path };
}

function install(node: { path: string }, root: string, args: string[]) {
  const file = path.join(tempRoot(), "install.sh");
  writeFileSync(file, script);
  return spawnSync("sh", [file, "--slurm-bridge", "--signing-key", E2E_BUNDLE_PUBLIC_KEY, ...args, "--root", root], {
    env: { PATH: node.path, HOME: root } as unknown as NodeJS.ProcessEnv,
    encoding: "utf8",
    timeout: 180_000,
  });
}

const listing = (root: string) => spawnSync("find", [root, "-mindepth", "1"], { encoding: "utf8" }).stdout.trim();

describe("install.sh --slurm-bridge", () => {
  it("serves the bridge's bundle and its signature beside the agent's", async () => {
    const base = inject("baseUrl");
    const shaOf = async (kind: string) =>
      createHash("sha256")
        .update(Buffer.from(await (await fetch(`${base}/install/${kind}-linux-${ARCH}.tar.gz`)).arrayBuffer()))
        .digest("hex");
    const sig = await fetch(`${base}/install/slurm-bridge-linux-${ARCH}.tar.gz.sig`);
    expect(sig.status).toBe(200);
    const signature = new Uint8Array(await sig.arrayBuffer());
    const [bridgeSha, agentSha] = [await shaOf("slurm-bridge"), await shaOf("agent")];
    expect(bridgeSha).not.toBe(agentSha);
    // signed as the bridge's: the agent's name, or another bundle, does not pass with it
    expect(verifyBundle(E2E_BUNDLE_PUBLIC_KEY, "slurm-bridge", ARCH, bridgeSha, signature)).toBe(true);
    expect(verifyBundle(E2E_BUNDLE_PUBLIC_KEY, "agent", ARCH, bridgeSha, signature)).toBe(false);
    expect(verifyBundle(E2E_BUNDLE_PUBLIC_KEY, "slurm-bridge", ARCH, agentSha, signature)).toBe(false);
    for (const bad of [`slurm-bridge-linux-riscv64.tar.gz`, `bridge-linux-${ARCH}.tar.gz`, `slurm-bridge-linux-${ARCH}.zip`]) {
      const r = await fetch(`${inject("baseUrl")}/install/${bad}`);
      expect(r.status, bad).toBe(404);
    }
  });

  it("refuses clearly, installing nothing, where Slurm cannot be used or the options cannot work", () => {
    const notExecutable = path.join(tempRoot(), "wrapper");
    writeFileSync(notExecutable, "#!/bin/sh\n");
    const base = ["--key", agentKey, "--output-dir", "/shared/gpuforge"];
    const cases: Array<[ReturnType<typeof loginNode>, string[], RegExp]> = [
      [loginNode({ slurm: "none" }), base, /sinfo not found: the Slurm bridge runs where Slurm's client tools are/],
      [loginNode({ slurm: "down" }), base, /scontrol ping: Slurm's controller does not answer/],
      [loginNode(), ["--key", agentKey], /--output-dir is required/],
      [loginNode(), [...base, "--container", "docker"], /--container takes oci, pyxis, wrapper or none/],
      [loginNode(), [...base, "--container", "oci"], /--container oci needs --oci-bundles/],
      [loginNode(), [...base, "--container", "wrapper", "--wrapper", notExecutable], /--container wrapper needs --wrapper PATH/],
      [loginNode(), ["--key", agentKey, "--output-dir", "/shared/my jobs"], /take no spaces, quotes or shell characters/],
      [loginNode(), [...base, "--slurm-conf", "/nonexistent/slurm.conf"], /--slurm-conf: cannot read/],
      [loginNode(), ["--key", "gf_short", "--output-dir", "/x"], /must be an agent key/],
    ];
    for (const [node, args, why] of cases) {
      const root = tempRoot();
      const r = install(node, root, args);
      expect(r.status, `${args.join(" ")}\n${r.stdout}${r.stderr}`).not.toBe(0);
      expect(r.stderr).toMatch(why);
      expect(listing(root)).toBe("");
    }
  });

  it("installs the bridge, its 0600 configuration and a restarting unit that stops the bridge only; an upgrade keeps key and state", () => {
    const node = loginNode();
    const root = tempRoot();
    const r = install(node, root, [
      "--key",
      agentKey,
      "--output-dir",
      "/shared/gpuforge",
      "--container",
      "oci",
      "--oci-bundles",
      "/shared/oci",
      "--partitions",
      "gpu,short",
      "--user",
      "gpuforge",
    ]);
    expect(r.status, r.stderr).toBe(0);
    const current = path.join(root, "opt/gpuforge-slurm-bridge/current");
    const version = spawnSync(path.join(current, "bin/node"), [path.join(current, "slurm-bridge.mjs"), "--version"], { encoding: "utf8" });
    expect(version.stdout.trim()).toBe(`gpuforge-slurm-bridge ${AGENT_VERSION}`);
    const envFile = path.join(root, "etc/gpuforge/slurm-bridge.env");
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    const config = readFileSync(envFile, "utf8");
    for (const line of [
      `GPUFORGE_URL=${inject("baseUrl")}`,
      `GPUFORGE_AGENT_KEY=${agentKey}`,
      "SLURM_OUTPUT_DIR=/shared/gpuforge",
      "SLURM_CONTAINER=oci",
      "SLURM_OCI_BUNDLES=/shared/oci",
      "SLURM_PARTITIONS=gpu,short",
      "SLURM_BRIDGE_STATE_DIR=/var/lib/gpuforge-slurm-bridge",
    ])
      expect(config).toContain(`${line}\n`);
    const unit = readFileSync(path.join(root, "etc/systemd/system/gpuforge-slurm-bridge.service"), "utf8");
    expect(unit).toContain("ExecStart=/opt/gpuforge-slurm-bridge/current/bin/node /opt/gpuforge-slurm-bridge/current/slurm-bridge.mjs");
    expect(unit).toContain("EnvironmentFile=/etc/gpuforge/slurm-bridge.env");
    expect(unit).toContain("User=gpuforge");
    expect(unit).toContain("Restart=always");
    expect(unit).toContain("KillMode=process");
    expect(node.systemctlCalls()).toEqual(["daemon-reload", "enable gpuforge-slurm-bridge", "restart gpuforge-slurm-bridge"]);
    // nothing of the node agent's
    expect(existsSync(path.join(root, "opt/gpuforge-agent"))).toBe(false);
    const state = path.join(root, "var/lib/gpuforge-slurm-bridge/placements.json");
    writeFileSync(state, "{}");
    const again = install(node, root, []);
    expect(again.status, again.stderr).toBe(0);
    expect(readFileSync(envFile, "utf8")).toBe(config);
    expect(existsSync(state)).toBe(true);
  });

  it("the installed bridge mirrors a real Slurm and runs a tenant's job there, inside its image", async () => {
    ensureSystemTool("slurm", "munge");
    const gpuType = unique("SI").replace(/-/g, "").slice(0, 12).toUpperCase();
    slurm = await startSlurmSandbox({ nodes: [{ name: "si1", gpus: 2, cpus: 2 }], containers: true });
    const node = loginNode({ slurm: "real" });
    const root = tempRoot();
    const r = install(node, root, [
      "--key",
      agentKey,
      "--no-start",
      "--slurm-conf",
      slurm.conf,
      "--output-dir",
      slurm.outputDir,
      "--container",
      "oci",
      "--oci-bundles",
      slurm.bundles,
    ]);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    // as systemd would start it: the unit's environment file, the state directory under the root
    const env: Record<string, string> = { PATH: node.path, HOME: root };
    for (const line of readFileSync(path.join(root, "etc/gpuforge/slurm-bridge.env"), "utf8").split("\n")) {
      const m = /^([A-Z_]+)=(.*)$/.exec(line);
      if (m) env[m[1]!] = m[2]!;
    }
    expect(env.SLURM_CONF).toBe(slurm.conf);
    const stateDir = path.join(root, "var/lib/gpuforge-slurm-bridge");
    mkdirSync(stateDir, { recursive: true });
    Object.assign(env, { SLURM_BRIDGE_STATE_DIR: stateDir, SLURM_POLL_INTERVAL_S: "1", SLURM_GPU_TYPES: `h100=${gpuType}` });
    const current = path.join(root, "opt/gpuforge-slurm-bridge/current");
    let output = "";
    bridge = spawn(path.join(current, "bin/node"), [path.join(current, "slurm-bridge.mjs")], {
      env: env as unknown as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    bridge.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    bridge.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    await eventually(
      async () => (await db().node.findFirst({ where: { clusterId, hostname: "si1", status: "available" } })) !== null,
      60_000,
      () => output,
    );
    const t = await makeTenant(4);
    const tenantKey = (await makeKey({ scope: "tenant", tenant_id: t.id })).key;
    const submitted = await api("POST", "/api/jobs", {
      key: tenantKey,
      body: {
        name: "through-installed-bridge",
        gpu_count: 1,
        gpu_type: gpuType,
        cluster_id: clusterId,
        image: "busybox:latest",
        command: "echo hello from $(cat /etc/hostname); exit 4",
      },
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    const id = submitted.body.job.id as string;
    const job = await eventually(
      async () => {
        const j = (await api("GET", `/api/jobs/${id}`, { key: tenantKey })).body.job;
        return j.status === "failed" ? j : null;
      },
      90_000,
      () => output,
    );
    expect(job).toMatchObject({ exit_code: 4, slurm_job_id: expect.stringMatching(/^\d+$/) });
    const logs = await eventually(async () => {
      const l = (await api("GET", `/api/jobs/${id}/logs`, { key: tenantKey })).body.data as Array<{ text: string }>;
      return l.length ? l : null;
    }, 20_000);
    expect(logs.map((l) => l.text).join("")).toContain("hello from gpuforge-test");
    // the bridge's tools never saw its key
    expect(output).not.toContain(agentKey);
  }, 240_000);
});
