import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash, generateKeyPairSync } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { AGENT_VERSION } from "@/agent/src/version";
import { verifyBundle } from "@/lib/agent-install/bundle-signing";
import { db } from "@/lib/db/client";
import { E2E_BUNDLE_PUBLIC_KEY } from "../support/bundle-signing-key";
import { makeCluster, makeKey, makeTenant } from "../support/fixtures";
import { fakeNode } from "../support/fake-node";
import { api } from "../support/http";

// The one-line install, for real: the control plane serves install.sh and the self-contained agent,
// the script installs it into a temporary root on a "node" whose nvidia-smi, docker and systemctl
// are stand-ins, and the installed agent (its bundled Node.js, not this checkout) then registers,
// runs a tenant's job in a container, ships its output and reports its exit, fenced. The bundle is
// installed only when its Ed25519 signature checks out against the key given in the command.

let script: string;
let agentKey: string;
let clusterId: string;
let agent: ChildProcess | undefined;

beforeAll(async () => {
  const res = await fetch(`${inject("baseUrl")}/install.sh`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("shellscript");
  script = await res.text();
  const cluster = await makeCluster();
  clusterId = cluster.id;
  agentKey = (await makeKey({ scope: "agent", cluster_id: cluster.id })).key;
});

afterAll(() => {
  agent?.kill("SIGKILL");
});

const arch = os.arch() === "x64" ? "x86_64" : "aarch64";
const signed = ["--signing-key", E2E_BUNDLE_PUBLIC_KEY];
const otherKey = generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "der" }).toString("base64");

function install(node: ReturnType<typeof fakeNode>, root: string, args: string[]) {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "install-")), "install.sh");
  writeFileSync(file, script);
  return spawnSync("sh", [file, ...args, "--root", root], {
    env: { PATH: node.path, HOME: root } as unknown as NodeJS.ProcessEnv,
    encoding: "utf8",
    timeout: 120_000,
  });
}

/** install(), without blocking this process (for a server of the test's own that the installer talks to). */
function installAsync(node: ReturnType<typeof fakeNode>, root: string, args: string[]): Promise<{ status: number | null; stderr: string }> {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "install-")), "install.sh");
  writeFileSync(file, script);
  const child = spawn("sh", [file, ...args, "--root", root], {
    env: { PATH: node.path, HOME: root } as unknown as NodeJS.ProcessEnv,
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 120_000,
  });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once("close", (status) => resolve({ status, stderr })));
}

const listing = (root: string) => spawnSync("find", [root, "-mindepth", "1"], { encoding: "utf8" }).stdout.trim();

describe("the one-line agent install", () => {
  it("serves install.sh pointed at this control plane, and the bundle with its signature (no checksum from the same server)", async () => {
    expect(script).toContain(`URL="${inject("baseUrl")}"`);
    expect(script.startsWith("#!/bin/sh")).toBe(true);
    expect(script).toContain("verify_bundle() {");
    const bundle = Buffer.from(await (await fetch(`${inject("baseUrl")}/install/agent-linux-${arch}.tar.gz`)).arrayBuffer());
    const sig = await fetch(`${inject("baseUrl")}/install/agent-linux-${arch}.tar.gz.sig`);
    expect(sig.status).toBe(200);
    const signature = new Uint8Array(await sig.arrayBuffer());
    expect(signature).toHaveLength(64);
    const sha = createHash("sha256").update(bundle).digest("hex");
    expect(verifyBundle(E2E_BUNDLE_PUBLIC_KEY, "agent", arch, sha, signature)).toBe(true);
    // the signature names the kind and architecture: it vouches for nothing else
    expect(verifyBundle(E2E_BUNDLE_PUBLIC_KEY, "slurm-bridge", arch, sha, signature)).toBe(false);
    expect(verifyBundle(otherKey, "agent", arch, sha, signature)).toBe(false);
    expect((await fetch(`${inject("baseUrl")}/install/agent-linux-${arch}.tar.gz.sha256`)).status).toBe(404);
    const other = await fetch(`${inject("baseUrl")}/install/agent-linux-riscv64.tar.gz`);
    expect(other.status).toBe(404);
    expect((await other.json()).error.code).toBe("not_found");
  });

  it("refuses clearly, installing nothing, without nvidia-smi, without docker, with its engine down, or without a valid key", () => {
    const cases: Array<[ReturnType<typeof fakeNode>, string[], RegExp]> = [
      [fakeNode({ nvidiaSmi: false }), [...signed, "--key", agentKey], /nvidia-smi not found/],
      [fakeNode({ docker: false }), [...signed, "--key", agentKey], /no container runtime/],
      [fakeNode({ docker: "engine-down" }), [...signed, "--key", agentKey], /engine does not answer/],
      [fakeNode(), [...signed, "--key", "gf_short"], /must be an agent key/],
      [fakeNode(), [...signed], /--key is required on the first install/],
      [fakeNode(), [...signed, "--key", agentKey, "--url", "ftp://x"], /http\(s\)/],
      [fakeNode(), [...signed, "--key-file", "/nonexistent/gpuforge.key"], /--key-file: cannot read/],
      [fakeNode(), ["--key", agentKey], /--signing-key is required on the first install/],
      [fakeNode(), ["--signing-key", "not-a-key", "--key", agentKey], /--signing-key must be the control plane's public key/],
      // a key that did not sign this bundle: downloaded, checked, refused
      [fakeNode(), ["--signing-key", otherKey, "--key", agentKey], /not signed by the key given/],
      // plain http to anywhere but this machine is warned about before anything else happens
      [
        fakeNode({ nvidiaSmi: false }),
        [...signed, "--key", agentKey, "--url", "http://cp.example.test"],
        /warning: http:\/\/cp\.example\.test is plain http[\s\S]*nvidia-smi not found/,
      ],
    ];
    for (const [node, args, why] of cases) {
      const root = mkdtempSync(path.join(os.tmpdir(), "node-root-"));
      const r = install(node, root, args);
      expect(r.status, r.stdout + r.stderr).not.toBe(0);
      expect(r.stderr).toMatch(why);
      expect(listing(root)).toBe("");
    }
  });

  it("installs the self-contained agent, its 0600 configuration and a restarting systemd unit; an upgrade keeps the key and the state", () => {
    const node = fakeNode();
    const root = mkdtempSync(path.join(os.tmpdir(), "node-root-"));
    const r = install(node, root, [...signed, "--key", agentKey, "--pod", "pod-a", "--rack", "r12"]);
    expect(r.status, r.stderr).toBe(0);
    const current = path.join(root, "opt/gpuforge-agent/current");
    expect(
      spawnSync(path.join(current, "bin/node"), [path.join(current, "agent.mjs"), "--version"], { encoding: "utf8" }).stdout.trim(),
    ).toBe(`gpuforge-agent ${AGENT_VERSION}`);
    const envFile = path.join(root, "etc/gpuforge/agent.env");
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    const config = readFileSync(envFile, "utf8");
    expect(config).toContain(`GPUFORGE_URL=${inject("baseUrl")}`);
    expect(config).toContain(`GPUFORGE_AGENT_KEY=${agentKey}`);
    expect(config).toContain("GPUFORGE_POD=pod-a");
    const unit = readFileSync(path.join(root, "etc/systemd/system/gpuforge-agent.service"), "utf8");
    expect(unit).toContain("Restart=always");
    expect(unit).toContain("KillMode=process");
    expect(unit).toContain("ExecStart=/opt/gpuforge-agent/current/bin/node /opt/gpuforge-agent/current/agent.mjs");
    expect(node.systemctlCalls()).toEqual(["daemon-reload", "enable gpuforge-agent", "restart gpuforge-agent"]);

    // the key the bundle was checked against is kept for upgrades
    expect(readFileSync(path.join(root, "etc/gpuforge/bundle-signing.pub"), "utf8")).toBe(`${E2E_BUNDLE_PUBLIC_KEY}\n`);

    // the agent's state, then an upgrade without --key or --signing-key
    const state = path.join(root, "var/lib/gpuforge-agent/placements.json");
    writeFileSync(state, "[]");
    const again = install(node, root, []);
    expect(again.status, again.stderr).toBe(0);
    expect(readFileSync(envFile, "utf8")).toBe(config);
    expect(existsSync(state)).toBe(true);
    expect(r.stderr + again.stderr).not.toMatch(/plain http/);
  });

  it("refuses a bundle changed on the way, even when whoever changed it also serves its signature", async () => {
    // a server in between (a cache, a mirror, a process that serves the wrong file): it hands out
    // the control plane's own signature with a bundle that is not the one signed
    const real = `${inject("baseUrl")}/install/agent-linux-${arch}.tar.gz`;
    const bundle = Buffer.from(await (await fetch(real)).arrayBuffer());
    const signature = Buffer.from(await (await fetch(`${real}.sig`)).arrayBuffer());
    const tampered = Buffer.concat([bundle, Buffer.from("\n# one more line\n")]);
    const server = http.createServer((req, res) => {
      res.end(req.url!.endsWith(".sig") ? signature : tampered);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const root = mkdtempSync(path.join(os.tmpdir(), "node-root-"));
      // (asynchronously: the server in between runs in this process)
      const r = await installAsync(fakeNode(), root, [...signed, "--key", agentKey, "--url", url]);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(/not signed by the key given/);
      expect(listing(root)).toBe("");
    } finally {
      server.close();
    }
  });

  it("takes the key from a file, so it never appears in the node's process list", () => {
    const node = fakeNode();
    const root = mkdtempSync(path.join(os.tmpdir(), "node-root-"));
    const keyFile = path.join(mkdtempSync(path.join(os.tmpdir(), "key-")), "gpuforge.key");
    writeFileSync(keyFile, `${agentKey}\n`, { mode: 0o600 });
    const r = install(node, root, [...signed, "--key-file", keyFile, "--no-start"]);
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(path.join(root, "etc/gpuforge/agent.env"), "utf8")).toContain(`GPUFORGE_AGENT_KEY=${agentKey}\n`);
  });

  it("the installed agent registers its node, runs a job in a container exactly once, ships its output and reports its exit", async () => {
    const node = fakeNode({ gpuName: "NVIDIA GB200" });
    const root = mkdtempSync(path.join(os.tmpdir(), "node-root-"));
    expect(install(node, root, [...signed, "--key", agentKey, "--no-start"]).status).toBe(0);
    const current = path.join(root, "opt/gpuforge-agent/current");
    const hostname = `installed-${path.basename(root).slice(-6).toLowerCase()}`;
    const env: Record<string, string> = { PATH: node.path, HOME: root, DOCKER_CONFIG: node.dockerConfig! };
    for (const line of readFileSync(path.join(root, "etc/gpuforge/agent.env"), "utf8").split("\n")) {
      const m = /^([A-Z_]+)=(.*)$/.exec(line);
      if (m) env[m[1]!] = m[2]!;
    }
    Object.assign(env, {
      AGENT_STATE_DIR: path.join(root, "var/lib/gpuforge-agent"),
      GPUFORGE_HOSTNAME: hostname,
      HEARTBEAT_INTERVAL_S: "1",
      METRICS_INTERVAL_S: "1",
    });
    let output = "";
    const proc = spawn(path.join(current, "bin/node"), [path.join(current, "agent.mjs")], {
      env: env as unknown as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    agent = proc;
    proc.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    let nodeRow: { id: string; containers: boolean; driverVersion: string | null; cudaVersion: string | null } | null = null;
    for (let i = 0; i < 150 && !nodeRow; i++) {
      nodeRow = await db().node.findFirst({
        where: { clusterId, hostname, status: "available" },
        select: { id: true, containers: true, driverVersion: true, cudaVersion: true },
      });
      if (!nodeRow) await new Promise((r) => setTimeout(r, 200));
    }
    expect(nodeRow, output).toMatchObject({ containers: true, driverVersion: "565.57.01", cudaVersion: "12.7" });

    const t = await makeTenant(4);
    const tenantKey = (await makeKey({ scope: "tenant", tenant_id: t.id })).key;
    const submitted = await api("POST", "/api/jobs", {
      key: tenantKey,
      body: {
        name: "installed-agent",
        gpu_count: 1,
        gpu_type: "GB200",
        cluster_id: clusterId,
        image: "alpine:3.20",
        command: "echo hello from the container; echo to stderr >&2; exit 3",
      },
    });
    expect(submitted.status).toBe(201);
    const id = submitted.body.job.id as string;
    let job: { status: string; exit_code: number | null } = { status: "", exit_code: null };
    for (let i = 0; i < 150 && job.status !== "failed"; i++) {
      job = (await api("GET", `/api/jobs/${id}`, { key: tenantKey })).body.job;
      if (job.status !== "failed") await new Promise((r) => setTimeout(r, 200));
    }
    expect(job, output).toMatchObject({ status: "failed", exit_code: 3 });
    let logs: { data: Array<{ stream: string; text: string }> } = { data: [] };
    for (let i = 0; i < 50 && logs.data.length < 2; i++) {
      logs = (await api("GET", `/api/jobs/${id}/logs`, { key: tenantKey })).body;
      if (logs.data.length < 2) await new Promise((r) => setTimeout(r, 200));
    }
    expect(logs.data.map((l) => [l.stream, l.text])).toEqual(
      expect.arrayContaining([
        ["stdout", "hello from the container\n"],
        ["stderr", "to stderr\n"],
      ]),
    );
    // exactly one container run for the one placement, with the image after `--`, never the key
    await new Promise((r) => setTimeout(r, 2_000)); // a few more heartbeats: nothing starts again
    const runs = node.docker!.runs().filter((a) => a.includes("alpine:3.20"));
    expect(runs).toHaveLength(1);
    expect(runs[0]!.slice(runs[0]!.indexOf("--"))).toEqual([
      "--",
      "alpine:3.20",
      "sh",
      "-c",
      "echo hello from the container; echo to stderr >&2; exit 3",
    ]);
    expect(JSON.stringify(node.docker!.calls())).not.toContain(agentKey);
    // on a network of its own that keeps tenants' containers apart, which the agent created
    expect(runs[0]![runs[0]!.indexOf("--network") + 1]).toBe("gpuforge-workloads");
    expect(
      node
        .docker!.calls()
        .some((c) => c.args[0] === "network" && c.args[1] === "create" && c.args.includes("com.docker.network.bridge.enable_icc=false")),
    ).toBe(true);
    proc.kill("SIGTERM");
  });
});
