import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { db } from "@/lib/db/client";
import { freePort } from "@/scripts/lib/embedded-db";
import { dockerStandin } from "../support/docker-standin";
import { fakeNode } from "../support/fake-node";
import { makeCluster, makeKey, makeTenant } from "../support/fixtures";
import { api } from "../support/http";
import { startDockerNode, type DockerNode } from "../support/real-docker";
import { tempDir } from "../support/temp-dir";

// The node agent's job, replica, pod and lost-container walks on a real docker engine
// (tests/support/real-docker.ts): the agent of this checkout runs on the "node" (a network namespace
// with the engine inside), registers, and runs tenants' work in real containers from busybox
// images, which the test then inspects. A second tenant's container on the same node tries to reach
// the first tenant's replica and pod every way a container can. Where no engine can start here, the
// walks run against the docker stand-in instead, and the output says so.

const SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHxuuJN4z0n9G0mAikmM8JdYo1BeQ0OS3O9GQ9m3mE5W walk@laptop";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 90_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** What the walks need of the engine: the real one, or the stand-in where none can start. */
interface Engine {
  real: DockerNode | null;
  nodeAddress: string;
  images: { busybox: string; serve: string; podHttpd: string };
  /** the port the pod image's entrypoint serves */
  podPort: number;
  agentEnv: Record<string, string>;
  spawnAgent(env: NodeJS.ProcessEnv): ChildProcess;
  forward(port: number): Promise<{ host: string; port: number }>;
  stop(): Promise<void>;
}

async function engine(): Promise<Engine> {
  const node = await startDockerNode();
  if (!("unavailable" in node)) {
    console.log(`[agent-real-docker] ${node.description}`);
    return {
      real: node,
      nodeAddress: node.nodeAddress,
      images: node.images,
      podPort: 8080,
      agentEnv: { PATH: `${node.shimDir}:${process.env.PATH}`, DOCKER_HOST: node.dockerHost },
      spawnAgent: (env) => node.spawnOnNode(process.execPath, ["--import", "tsx", "agent/src/main.ts"], env),
      forward: async (port) => ({ host: node.hostAddress, port: await node.forward(port) }),
      stop: () => node.stop(),
    };
  }
  console.warn(
    `[agent-real-docker] FALLBACK: no docker engine can start on this machine (${node.unavailable}); the walks run against the docker stand-in, and what only a real engine can show (docker inspect, inter-container isolation) is not asserted`,
  );
  const www = tempDir("standin-www-");
  mkdirSync(path.join(www, "v1"));
  writeFileSync(path.join(www, "health"), "ok\n");
  writeFileSync(path.join(www, "v1", "models"), '{"object":"list","data":[{"id":"test/busybox","object":"model"}]}\n');
  const podPort = await freePort();
  const images = { busybox: "gpuforge-test/busybox:1", serve: "gpuforge-test/serve:1", podHttpd: "gpuforge-test/pod-httpd:1" };
  const standin = dockerStandin({
    images: {
      [images.serve]: `exec busybox httpd -f -p 127.0.0.1:$GPUFORGE_PORT -h ${www}`,
      [images.podHttpd]: `exec busybox httpd -f -p 127.0.0.1:${podPort} -h ${www}`,
    },
  });
  const { spawn } = await import("node:child_process");
  return {
    real: null,
    nodeAddress: `127.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`,
    images,
    podPort,
    agentEnv: standin.env,
    spawnAgent: (env) => spawn(process.execPath, ["--import", "tsx", "agent/src/main.ts"], { env, stdio: ["ignore", "pipe", "pipe"] }),
    forward: async (port) => ({ host: "127.0.0.1", port }),
    stop: async () => standin.removeAll(),
  };
}

let eng: Engine;
let agent: ChildProcess | undefined;
let agentLog = "";
let agentEnv: NodeJS.ProcessEnv;
let clusterId: string;
let nodeId: string;
let tenantA: { id: string; key: string };
let tenantB: { id: string; key: string };

function startAgent() {
  agent = eng.spawnAgent(agentEnv);
  agent.stdout!.on("data", (d: Buffer) => (agentLog += d.toString()));
  agent.stderr!.on("data", (d: Buffer) => (agentLog += d.toString()));
}

async function killAgent() {
  const a = agent;
  agent = undefined;
  if (!a || a.exitCode !== null) return;
  const gone = new Promise((r) => a.once("exit", r));
  a.kill("SIGKILL");
  await gone;
}

const inspect = (name: string) => {
  const r = eng.real!.docker(["inspect", name]);
  return r.status === 0 ? (JSON.parse(r.stdout) as Array<Record<string, any>>)[0]! : null; // eslint-disable-line @typescript-eslint/no-explicit-any -- docker's own JSON
};

async function logsOf(jobId: string, key: string): Promise<string> {
  const r = await api("GET", `/api/jobs/${jobId}/logs`, { key });
  return (r.body?.data ?? []).map((c: { text: string }) => c.text).join("");
}

async function jobStatus(id: string, key: string) {
  return (await api("GET", `/api/jobs/${id}`, { key })).body.job as { status: string; exit_code: number | null; attempts: number };
}

async function submit(key: string, body: Record<string, unknown>) {
  const r = await api("POST", "/api/jobs", { key, body: { gpu_count: 1, gpu_type: "B100", cluster_id: clusterId, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.job.id as string;
}

/**
 * A second tenant's job on the same node that tries a workload's port every way a container can:
 * the node's address, the workload network's gateway (the node itself), and the workload
 * container's own address; its log says what answered.
 */
async function probeFromAnotherTenant(targets: Array<[label: string, host: string, port: number]>): Promise<Record<string, string>> {
  const lines = targets
    .map(
      ([label, host, port]) =>
        `printf 'GET /health HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n' | busybox nc -w 3 ${host} ${port} > /tmp/out-${label} 2>&1; echo "${label}: $(head -1 /tmp/out-${label} | tr -d '\\r')"`,
    )
    .join("; ");
  const id = await submit(tenantB.key, { name: "neighbour", image: eng.images.busybox, command: `${lines}; echo probes-done` });
  const text = await eventually("the neighbour's probes", async () => {
    const t = await logsOf(id, tenantB.key);
    return t.includes("probes-done") ? t : null;
  });
  console.log(`[agent-real-docker] a second tenant's container tried: ${text.trim().replace(/\n/g, " · ")}`);
  return Object.fromEntries(
    text
      .split("\n")
      .map((l) => /^([a-z-]+): (.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );
}

beforeAll(async () => {
  eng = await engine();
  const cluster = await makeCluster();
  clusterId = cluster.id;
  const agentKey = (await makeKey({ scope: "agent", cluster_id: cluster.id })).key;
  const node = fakeNode({ docker: false, systemctl: false, gpuName: "NVIDIA B100" });
  const cp = await eng.forward(Number(new URL(inject("baseUrl")).port));
  const stateDir = tempDir("real-docker-agent-");
  const ports =
    eng.real?.mode === "netns"
      ? "40000-40999"
      : `${20_000 + Math.floor(Math.random() * 300) * 100}-${20_099 + Math.floor(Math.random() * 300) * 100}`;
  agentEnv = {
    ...eng.agentEnv,
    PATH: `${eng.agentEnv.PATH!.split(":")[0]}:${node.bin}:${process.env.PATH}`,
    HOME: stateDir,
    GPUFORGE_URL: `http://${cp.host}:${cp.port}`,
    GPUFORGE_AGENT_KEY: agentKey,
    GPUFORGE_HOSTNAME: `real-docker-${randomUUID().slice(0, 8)}`,
    GPUFORGE_NODE_ADDRESS: eng.nodeAddress,
    AGENT_STATE_DIR: stateDir,
    AGENT_PUBLISHED_PORTS: ports,
    HEARTBEAT_INTERVAL_S: "1",
    METRICS_INTERVAL_S: "2",
  } as unknown as NodeJS.ProcessEnv;
  startAgent();
  const registered = await eventually(
    `the agent to register its node\n${agentLog}`,
    () => db().node.findFirst({ where: { clusterId, hostname: agentEnv.GPUFORGE_HOSTNAME!, status: "available", containers: true } }),
    120_000,
  );
  nodeId = registered.id;
  expect(registered.address).toBe(eng.nodeAddress);
  for (const t of ["a", "b"] as const) {
    const tenant = await makeTenant(8);
    const { key } = await makeKey({ scope: "tenant", tenant_id: tenant.id });
    if (t === "a") tenantA = { id: tenant.id, key };
    else tenantB = { id: tenant.id, key };
  }
}, 300_000);

afterAll(async () => {
  await killAgent();
  await eng?.stop();
});

describe("the node agent on a real docker engine", () => {
  it("runs a job in a confined container: the placement's resources, the workload network, no privileges, no host mounts, never the agent key", async () => {
    const long = await submit(tenantA.key, { name: "confined", image: eng.images.busybox, command: "echo started; sleep 120" });
    await eventually("the job to run", async () => (await jobStatus(long, tenantA.key)).status === "running");
    const container = `gpuforge-job-${long}-1`;
    if (eng.real) {
      // the job runs once the agent has launched `docker run`; the engine may still be starting the
      // container (it was "created" a moment after on a loaded machine)
      const c = await eventually("its container to run", async () => {
        const seen = inspect(container);
        return seen?.State.Status === "running" ? seen : null;
      });
      expect(c.State.Status).toBe("running");
      expect(c.HostConfig.Privileged).toBe(false);
      expect(c.HostConfig.NetworkMode).toBe("gpuforge-workloads");
      expect(Object.keys(c.NetworkSettings.Networks)).toEqual(["gpuforge-workloads"]);
      expect(c.HostConfig.PidMode).toBe("");
      expect(c.HostConfig.IpcMode).not.toBe("host");
      expect(c.HostConfig.SecurityOpt).toContain("no-new-privileges");
      expect(c.HostConfig.CapDrop).toEqual(expect.arrayContaining(["NET_RAW", "MKNOD"]));
      expect(c.HostConfig.CapAdd ?? []).toEqual([]);
      expect(c.HostConfig.Binds ?? []).toEqual([]);
      expect(c.Mounts).toEqual([]);
      expect(c.HostConfig.Memory).toBeGreaterThan(0);
      expect(c.HostConfig.MemorySwap).toBe(c.HostConfig.Memory);
      expect(c.HostConfig.PidsLimit).toBe(16_384);
      expect(c.HostConfig.NanoCpus).toBeGreaterThan(0);
      expect(c.HostConfig.PortBindings ?? {}).toEqual({});
      const env = (c.Config.Env as string[]).join("\n");
      expect(env).not.toContain("GPUFORGE_AGENT_KEY");
      expect(env).not.toContain(agentEnv.GPUFORGE_AGENT_KEY);
      expect(env).toContain(`GPUFORGE_JOB_ID=${long}`);
      // the network it joined keeps tenants' containers apart
      const network = JSON.parse(eng.real.docker(["network", "inspect", "gpuforge-workloads"]).stdout)[0];
      expect(network.Options["com.docker.network.bridge.enable_icc"]).toBe("false");
      expect(network.Internal).toBe(false);
    }
    expect(await eventually("its output", async () => (await logsOf(long, tenantA.key)).includes("started\n"))).toBe(true);
    // cancelled by its tenant: the agent stops the container
    expect((await api("PATCH", `/api/jobs/${long}`, { key: tenantA.key, body: { status: "cancelled" } })).status).toBe(200);
    if (eng.real)
      await eventually("its container to go", async () => {
        const c = inspect(container);
        return c === null || c.State.Status !== "running";
      });

    // a job's own exit code and its output, stdout and stderr, come back fenced
    const short = await submit(tenantA.key, { name: "exits", image: eng.images.busybox, command: "echo out; echo err >&2; exit 3" });
    const done = await eventually("the job to fail", async () => {
      const j = await jobStatus(short, tenantA.key);
      return j.status === "failed" ? j : null;
    });
    expect(done.exit_code).toBe(3);
    const logs = (await api("GET", `/api/jobs/${short}/logs`, { key: tenantA.key })).body.data as Array<{ stream: string; text: string }>;
    expect(logs.map((l) => [l.stream, l.text])).toEqual(
      expect.arrayContaining([
        ["stdout", "out\n"],
        ["stderr", "err\n"],
      ]),
    );
  });

  it("a replica answers the gateway only: a second tenant's container on the same node reaches neither its guarded port nor its container", async () => {
    const created = await api("POST", "/api/endpoints", {
      key: tenantA.key,
      body: {
        name: `real-${randomUUID().slice(0, 6)}`,
        model: "test/busybox",
        image: eng.images.serve,
        gpu_type: "B100",
        gpus_per_replica: 1,
        replicas: 1,
        cluster_id: clusterId,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const endpointId = created.body.endpoint.id as string;
    try {
      const replica = await eventually("the replica's guard to be reported", () =>
        db().endpointReplica.findFirst({ where: { endpointId, status: { not: "stopped" }, hostPort: { not: null } } }),
      );
      // through the gateway, with the tenant's key: the serving container answers (the gateway's probe made it ready)
      const models = await eventually("the gateway to serve the replica", async () => {
        const r = await api("GET", `/v1/endpoints/${endpointId}/v1/models`, { key: tenantA.key });
        return r.status === 200 ? r : null;
      });
      expect(models.body.data[0].id).toBe("test/busybox");
      const name = `gpuforge-replica-${replica.id}`;
      let containerAddress: string | null = null;
      let bridge: string | null = null;
      if (eng.real) {
        const c = inspect(name)!;
        // the serving container publishes nothing: only the agent's guard listens on the node
        expect(c.HostConfig.PortBindings ?? {}).toEqual({});
        expect((c.Config.Env as string[]).join("\n")).not.toContain("GPUFORGE_AGENT_KEY");
        containerAddress = c.NetworkSettings.Networks["gpuforge-workloads"].IPAddress as string;
        bridge = JSON.parse(eng.real.docker(["network", "inspect", "gpuforge-workloads"]).stdout)[0].IPAM.Config[0].Gateway as string;
      }
      const seen = await probeFromAnotherTenant([
        ["node-address", eng.nodeAddress, replica.hostPort!],
        ...(bridge ? ([["bridge-gateway", bridge, replica.hostPort!]] as Array<[string, string, number]>) : []),
        ...(containerAddress ? ([["replica-container", containerAddress, 8000]] as Array<[string, string, number]>) : []),
      ]);
      // the guard answers without the placement's secret: 403, and the serving container saw nothing
      expect(seen["node-address"]).toBe("HTTP/1.1 403 Forbidden");
      if (bridge) expect(seen["bridge-gateway"]).toBe("HTTP/1.1 403 Forbidden");
      // and the container itself is out of reach: the workload network lets no container talk to another
      if (containerAddress) {
        if (eng.real!.enforcesIsolation) expect(seen["replica-container"]).toMatch(/timed out|can't connect|^$/);
        else
          console.warn(
            `[agent-real-docker] not asserted without docker's iptables: replica-container answered ${JSON.stringify(seen["replica-container"])}`,
          );
      }
    } finally {
      expect((await api("DELETE", `/api/endpoints/${endpointId}`, { key: tenantA.key })).status).toBe(204);
      await eventually(
        "the replica to stop",
        async () => (await db().gpu.count({ where: { nodeId, allocatedReplicaId: { not: null } } })) === 0,
      );
    }
  });

  it("a pod publishes SSH alone; its HTTP port answers its tenant through the gateway, and nobody else on the node", async () => {
    const created = await api("POST", "/api/pods", {
      key: tenantA.key,
      body: {
        name: `nb-${randomUUID().slice(0, 6)}`,
        gpu_type: "B100",
        gpu_count: 1,
        image: eng.images.podHttpd,
        ports: [eng.podPort],
        ssh_public_key: SSH_KEY,
        cluster_id: clusterId,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const podId = created.body.pod.id as string;
    try {
      const pod = await eventually("the pod to run", async () => {
        const p = (await api("GET", `/api/pods/${podId}`, { key: tenantA.key })).body.pod;
        return p.status === "running" ? p : null;
      });
      const web = pod.ports.find((p: { container_port: number }) => p.container_port === eng.podPort);
      expect(web).toMatchObject({ access: "gateway", url: expect.stringContaining(`/v1/pods/${podId}/ports/${eng.podPort}/`) });
      expect(pod.ports.find((p: { container_port: number }) => p.container_port === 22)).toMatchObject({ access: "ssh" });
      expect(pod.ssh_command).toBe(
        `ssh root@${eng.nodeAddress} -p ${pod.ports.find((p: { container_port: number }) => p.container_port === 22).host_port} -L ${eng.podPort}:localhost:${eng.podPort}`,
      );
      const through = await eventually("the pod's port through the gateway", async () => {
        const r = await api("GET", `/v1/pods/${podId}/ports/${eng.podPort}/health`, { key: tenantA.key });
        return r.status === 200 ? r : null;
      });
      expect(through.body).toBe("ok\n");
      expect((await api("GET", `/v1/pods/${podId}/ports/${eng.podPort}/health`, { key: tenantB.key })).status).toBe(404);
      let containerAddress: string | null = null;
      if (eng.real) {
        const c = inspect(`gpuforge-pod-${podId}-1`)!;
        expect(Object.keys(c.HostConfig.PortBindings)).toEqual(["22/tcp"]);
        expect(c.HostConfig.Privileged).toBe(false);
        // its one mount is the agent's own authorized_keys file, read-only
        expect(c.Mounts).toHaveLength(1);
        expect(c.Mounts[0]).toMatchObject({ Type: "bind", Destination: "/root/.ssh/authorized_keys", RW: false });
        expect(c.Mounts[0].Source.startsWith(agentEnv.AGENT_STATE_DIR!)).toBe(true);
        containerAddress = c.NetworkSettings.Networks["gpuforge-workloads"].IPAddress as string;
      }
      const seen = await probeFromAnotherTenant([
        ["node-address", eng.nodeAddress, web.host_port],
        ...(containerAddress ? ([["pod-container", containerAddress, eng.podPort]] as Array<[string, string, number]>) : []),
      ]);
      expect(seen["node-address"]).toBe("HTTP/1.1 403 Forbidden");
      if (containerAddress && eng.real!.enforcesIsolation) expect(seen["pod-container"]).toMatch(/timed out|can't connect|^$/);
    } finally {
      expect((await api("DELETE", `/api/pods/${podId}`, { key: tenantA.key })).status).toBe(200);
      await eventually(
        "the pod's GPUs to be free",
        async () => (await db().gpu.count({ where: { nodeId, allocatedPodId: { not: null } } })) === 0,
      );
    }
  });

  it("containers lost while the agent was down are reported once: the job interrupted and placed again, the pod exited", async () => {
    const job = await submit(tenantA.key, { name: "lost", image: eng.images.busybox, command: "sleep 300" });
    const created = await api("POST", "/api/pods", {
      key: tenantA.key,
      body: {
        name: `lost-${randomUUID().slice(0, 6)}`,
        gpu_type: "B100",
        gpu_count: 1,
        image: eng.images.podHttpd,
        ports: [eng.podPort],
        cluster_id: clusterId,
      },
    });
    expect(created.status).toBe(201);
    const podId = created.body.pod.id as string;
    await eventually("both to run", async () => {
      const [j, p] = [await jobStatus(job, tenantA.key), (await api("GET", `/api/pods/${podId}`, { key: tenantA.key })).body.pod];
      return j.status === "running" && p.status === "running";
    });
    await killAgent();
    const names = [`gpuforge-job-${job}-1`, `gpuforge-pod-${podId}-1`];
    if (eng.real) expect(eng.real.docker(["rm", "-f", ...names]).status).toBe(0);
    else for (const n of names) (await import("node:child_process")).spawnSync("docker", ["rm", "-f", n], { env: agentEnv });
    startAgent();
    const events = await eventually("the job's interruption to be reported", async () => {
      const e = (await api("GET", `/api/jobs/${job}/events`, { key: tenantA.key })).body.data as Array<{
        to_status: string;
        reason: string | null;
      }>;
      return e.some((x) => /lost while the node agent restarted/.test(x.reason ?? "")) ? e : null;
    });
    expect(events.filter((x) => /lost while the node agent restarted/.test(x.reason ?? ""))).toHaveLength(1);
    // placed again, without spending a retry, and started afresh on the node (a new attempt)
    const again = await eventually("the job to run again", async () => {
      const j = await jobStatus(job, tenantA.key);
      return j.status === "running" && j.attempts === 2 ? j : null;
    });
    expect(again.attempts).toBe(2);
    const pod = await eventually("the pod's loss to be reported", async () => {
      const p = (await api("GET", `/api/pods/${podId}`, { key: tenantA.key })).body.pod;
      return p.status === "failed" ? p : null;
    });
    expect(pod.status_reason).toMatch(/lost while the node agent restarted/);
    expect((await api("PATCH", `/api/jobs/${job}`, { key: tenantA.key, body: { status: "cancelled" } })).status).toBe(200);
  });
});
