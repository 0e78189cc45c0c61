import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AccessGuard } from "@/agent/src/access-guard";
import { DockerLauncher } from "@/agent/src/container";
import { LogSpool } from "@/agent/src/log-spool";
import { PlacementBook } from "@/agent/src/placement-book";
import { PodSupervisor, type PodReport } from "@/agent/src/pod-supervisor";
import { PortPool } from "@/agent/src/port-pool";
import { ReplicaSupervisor } from "@/agent/src/replica-supervisor";
import type { PodAssignment, ReplicaAssignment } from "@/lib/fleet/assignments";
import { WORKLOAD_ACCESS_HEADER } from "@/lib/fleet/workload-access";
import { freePort } from "@/scripts/lib/embedded-db";
import { dockerStandin } from "../support/docker-standin";
import { tempDir } from "../support/temp-dir";
import { until } from "../support/wait";

// Replicas' serving ports and pods' HTTP ports are reachable only through the agent's access
// guard, which forwards a request to the container only with the placement's access secret (what
// the inference gateway sends); the containers themselves publish nothing but a pod's SSH port.

const SECRET = "s3cr3t-access-of-this-placement-0123456789ab";
const limits = { cpus: 8, memoryMb: 65_536, pids: 16_384 };

type Reply = { status: number; body: string; headers: http.IncomingHttpHeaders };

function call(
  port: number,
  opts: { secret?: string; method?: string; path?: string; body?: string; headers?: Record<string, string> } = {},
) {
  return new Promise<Reply>((resolve, reject) => {
    const req = http.request({
      host: "127.0.0.1",
      port,
      // a connection of its own each time: what is asked is whether the port answers now
      agent: false,
      method: opts.method ?? (opts.body ? "POST" : "GET"),
      path: opts.path ?? "/v1/models",
      headers: { ...(opts.secret !== undefined ? { [WORKLOAD_ACCESS_HEADER]: opts.secret } : {}), ...opts.headers },
    });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** A workload's server: echoes what reached it (path, body, whether any access header did). */
async function workload() {
  const seen: Array<{ url: string; body: string; access: string | undefined }> = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const access = req.headers[WORKLOAD_ACCESS_HEADER] as string | undefined;
      seen.push({ url: req.url!, body, access });
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ url: req.url, got: body.length, access: access ?? null }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { port: (server.address() as AddressInfo).port, seen, close: () => server.close() };
}

/** Host ports handed out from a list of free ones (the unit tests never take a fixed range of this shared machine). */
class ListPool extends PortPool {
  constructor(private readonly free: number[]) {
    super(1024, 65_535);
  }
  override take(count: number): number[] | null {
    return this.free.length >= count ? this.free.splice(0, count) : null;
  }
}

const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup.splice(0)) fn();
});

describe("the access guard", () => {
  it("answers 403 to a request without the secret, or with a wrong one, before anything reaches the workload", async () => {
    const w = await workload();
    const guard = new AccessGuard(SECRET, { label: "replica r1" });
    cleanup.push(() => guard.close(), w.close);
    await guard.listen(await freePort(), "127.0.0.1");
    guard.setTarget({ host: "127.0.0.1", port: w.port });
    for (const secret of [undefined, "", "wrong", SECRET.slice(0, -1), `${SECRET}x`, SECRET.toUpperCase()]) {
      const r = await call(guard.port, { secret, body: "x".repeat(100_000) });
      expect(r.status, String(secret)).toBe(403);
      expect(JSON.parse(r.body).error.code).toBe("forbidden");
    }
    expect(w.seen).toEqual([]);
  });

  it("forwards a request with the secret, path, query and body intact, and never hands the workload the secret", async () => {
    const w = await workload();
    const guard = new AccessGuard(SECRET, { label: "replica r1" });
    cleanup.push(() => guard.close(), w.close);
    await guard.listen(await freePort(), "127.0.0.1");
    // not up yet: the guard says so rather than connecting anywhere
    expect((await call(guard.port, { secret: SECRET })).status).toBe(503);
    guard.setTarget({ host: "127.0.0.1", port: w.port });
    const body = JSON.stringify({ messages: [{ role: "user", content: "y".repeat(200_000) }] });
    const r = await call(guard.port, { secret: SECRET, path: "/v1/chat/completions?stream=false", body });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ url: "/v1/chat/completions?stream=false", got: body.length, access: null });
    expect(w.seen).toHaveLength(1);
    expect(w.seen[0]!.access).toBeUndefined();
    // a container that went away is a 502, not a hang
    w.close();
    guard.setTarget({ host: "127.0.0.1", port: await freePort() });
    expect((await call(guard.port, { secret: SECRET })).status).toBe(502);
  });

  it("refuses to listen on a port someone else holds, and on something that is not an address", async () => {
    const holder = http.createServer();
    await new Promise<void>((r) => holder.listen(0, "127.0.0.1", () => r()));
    cleanup.push(() => holder.close());
    const guard = new AccessGuard(SECRET);
    await expect(guard.listen((holder.address() as AddressInfo).port, "127.0.0.1")).rejects.toThrow(/EADDRINUSE/);
    await expect(new AccessGuard(SECRET).listen(1, "0.0.0.0 -p 22")).rejects.toThrow(/not an address/);
  });
});

describe("replicas are reached through their guard only", () => {
  it("publishes nothing, guards a host port of its range, points it at the container and reports the port once it runs", async () => {
    const servingPort = await freePort();
    // the stand-in runs the "container" on this host: its address on the workload network is 127.0.0.1
    const entry = `exec "${process.execPath}" -e "require('http').createServer((q,s)=>s.end('served '+q.url)).listen(${servingPort},'127.0.0.1')"`;
    const docker = dockerStandin({ entrypoint: entry });
    const reported: Array<[string, number]> = [];
    const hostPort = await freePort();
    const a: ReplicaAssignment = {
      kind: "endpoint_replica",
      replica_id: "r1",
      endpoint_id: "ep-1",
      endpoint_name: "chat",
      model: "org/model",
      attempt: 1,
      fence: randomUUID(),
      gpu_ids: ["a"],
      metrics_path: "/api/endpoints/ep-1/metrics",
      serving_port: servingPort,
      address_path: "/api/endpoints/ep-1/replicas/r1/address",
      logs_path: "/api/endpoints/ep-1/replicas/r1/logs",
      report_token: "gfw_t",
      access_secret: SECRET,
    };
    const sup = new ReplicaSupervisor({
      launcher: new DockerLauncher(docker.env),
      logs: new LogSpool(tempDir("spool-")),
      baseUrl: "https://cp",
      serveImage: "vllm/vllm-openai:v0.6.3",
      gpuIndexOf: () => 0,
      limits: () => limits,
      reportUnhealthy: async () => {},
      ports: new ListPool([hostPort]),
      guardHost: "127.0.0.1",
      reportAddress: async (x, port) => void reported.push([x.replica_id, port]),
    });
    cleanup.push(() => sup.stopAll("test over"));
    sup.reconcile([a]);
    await until(() => docker.runs().length === 1);
    const run = docker.runs()[0]!;
    // the container publishes no port at all: docker cannot open its serving port to the node's network
    expect(run.slice(0, run.indexOf("--"))).not.toContain("--publish");
    expect(run).toContain(`GPUFORGE_PORT=${servingPort}`);
    expect(run.join(" ")).not.toContain(SECRET);
    await until(() => (sup.announceAll(), reported.length >= 1));
    expect(new Set(reported.map((r) => r.join(":")))).toEqual(new Set([`r1:${hostPort}`]));
    expect(sup.hostPorts()).toEqual([hostPort]);
    // the guard: the gateway's secret gets through to the container, nothing else does
    let through: Reply | undefined;
    await until(() => {
      void call(hostPort, { secret: SECRET, path: "/health" }).then(
        (r) => (through = r),
        () => {},
      );
      return through?.status === 200;
    });
    expect(through!.body).toBe("served /health");
    expect((await call(hostPort, { path: "/health" })).status).toBe(403);
    // unassigned: the guard stops listening with the container
    sup.reconcile([]);
    await expect(call(hostPort, { secret: SECRET })).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe("pods: SSH is published for the tenant's key, every other port only behind the guard", () => {
  const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHxuuJN4z0n9G0mAikmM8JdYo1BeQ0OS3O9GQ9m3mE5W me@laptop";

  it("publishes 22 alone, guards the notebook port, and reports both host ports once the guard forwards to the container", async () => {
    const notebook = await freePort();
    const entry = `exec "${process.execPath}" -e "require('http').createServer((q,s)=>s.end('notebook '+q.url)).listen(${notebook},'127.0.0.1')"`;
    const docker = dockerStandin({ entrypoint: entry });
    const sent: Array<{ path: string; report: PodReport }> = [];
    const dir = tempDir("pods-");
    const [sshPort, guardPort] = [await freePort(), await freePort()];
    const sup = new PodSupervisor({
      launcher: new DockerLauncher(docker.env),
      logs: new LogSpool(path.join(dir, "logs")),
      book: new PlacementBook(path.join(dir, "placements.json")),
      ports: new ListPool([sshPort, guardPort]),
      stateDir: dir,
      gpuIndexOf: () => 0,
      limits: () => limits,
      guardHost: "127.0.0.1",
      send: async (p, report) => void sent.push({ path: p, report }),
    });
    cleanup.push(() => sup.interruptAll("test over"));
    const a: PodAssignment = {
      kind: "pod",
      pod_id: "p1",
      pod_name: "notebook",
      attempt: 1,
      fence: randomUUID(),
      gpu_ids: ["g0"],
      logs_path: "/api/pods/p1/logs",
      status_path: "/api/pods/p1/status",
      image: "runpod/pytorch:2.4.0",
      ports: [22, notebook],
      ssh_public_key: KEY,
      access_secret: SECRET,
    };
    sup.reconcile([a]);
    await until(() => docker.runs().length === 1);
    const run = docker.runs()[0]!;
    const published = run.filter((_, i) => run[i - 1] === "--publish");
    expect(published).toEqual([`${sshPort}:22/tcp`]);
    expect(run.join(" ")).not.toContain(SECRET);
    await until(() => (void sup.tick(), sent.length === 1));
    expect(sent[0]!.report).toEqual({
      attempt: 1,
      fence: a.fence,
      status: "running",
      ports: [
        { container_port: 22, host_port: sshPort },
        { container_port: notebook, host_port: guardPort },
      ],
    });
    let through: Reply | undefined;
    await until(() => {
      void call(guardPort, { secret: SECRET, path: "/lab" }).then(
        (r) => (through = r),
        () => {},
      );
      return through?.status === 200;
    });
    expect(through!.body).toBe("notebook /lab");
    expect((await call(guardPort, { path: "/lab" })).status).toBe(403);
    expect((await call(guardPort, { path: "/lab", secret: "someone-elses" })).status).toBe(403);
  });
});
