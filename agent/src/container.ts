// How the agent runs tenant work: always in a container, never on the host. This file holds the
// one place that builds a `docker run` command line (a pure function, tested against hostile
// inputs) and the launcher that runs it, captures the container's output and re-adopts containers
// after an agent restart.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { isIP } from "node:net";
import { isImageReference } from "../../lib/fleet/image-reference";

export interface ContainerSpec {
  /** container name: unique per placement, so a restarted agent finds its containers again */
  name: string;
  image: string;
  /** run as `sh -c command` inside the image; absent: the image's own entrypoint */
  command?: string;
  /** GPU indexes on this node */
  gpus: number[];
  /** the container's whole environment: nothing of the agent's leaks in */
  env: Record<string, string>;
  labels: Record<string, string>;
  limits: ResourceLimits;
  /**
   * container ports published on host ports of the node: a pod's SSH port only (the tenant's key
   * guards it). Replicas' and pods' HTTP ports are never published: the agent's access guard
   * reaches them at the container's address (Launcher.address).
   */
  publish?: PublishedPort[];
  /** files of the agent's own making, mounted read-only (a pod's authorized_keys) */
  mounts?: ReadOnlyMount[];
}

interface PublishedPort {
  hostPort: number;
  containerPort: number;
  /** the host address the port listens on (default all of them) */
  hostIp?: string;
}

interface ReadOnlyMount {
  /** an absolute path on the node, in the agent's state directory */
  source: string;
  /** an absolute path in the container */
  target: string;
}

export interface ResourceLimits {
  cpus: number;
  memoryMb: number;
  pids: number;
}

/**
 * The network every workload container joins: a bridge network of its own with inter-container
 * traffic off, so one tenant's container cannot reach another's on the same node (the default
 * bridge lets them talk). What containers may reach beyond the node (the cloud's metadata service,
 * say) is the host firewall's job: see SECURITY.md for the DOCKER-USER rule.
 */
export const WORKLOAD_NETWORK = "gpuforge-workloads";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// mount paths are written into --mount's comma-separated syntax: nothing that could end a field
const MOUNT_PATH = /^\/[A-Za-z0-9._/-]*$/;
const isPort = (p: number) => Number.isInteger(p) && p >= 1 && p <= 65_535;
const LABEL_KEY = /^[a-z0-9][a-z0-9.-]*$/;

export class RefusedSpec extends Error {}

/**
 * The `docker run` arguments for a placement. Every value a tenant controls (image, command,
 * environment values) is passed as one argument in a place where docker cannot read it as an
 * option: the image only after `--`, the command only after the image. The container gets the
 * placement's GPUs only, the workload network (WORKLOAD_NETWORK), no new privileges, no raw sockets, bounded
 * CPU, memory (no swap), processes and shared memory.
 */
export function dockerRunArgs(spec: ContainerSpec): string[] {
  if (!isImageReference(spec.image)) throw new RefusedSpec(`not a container image reference: ${JSON.stringify(spec.image.slice(0, 80))}`);
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(spec.name)) throw new RefusedSpec(`not a container name: ${spec.name}`);
  if (spec.gpus.length === 0 || spec.gpus.some((g) => !Number.isInteger(g) || g < 0))
    throw new RefusedSpec("no GPUs of this node were assigned");
  const args = [
    "run",
    "--name",
    spec.name,
    "--init",
    "--gpus",
    `"device=${spec.gpus.join(",")}"`,
    "--network",
    WORKLOAD_NETWORK,
    "--security-opt",
    "no-new-privileges",
    "--cap-drop",
    "NET_RAW",
    "--cap-drop",
    "MKNOD",
    "--cpus",
    String(spec.limits.cpus),
    "--memory",
    `${spec.limits.memoryMb}m`,
    "--memory-swap",
    `${spec.limits.memoryMb}m`,
    "--shm-size",
    `${Math.max(64, Math.min(16_384, Math.floor(spec.limits.memoryMb / 4)))}m`,
    "--pids-limit",
    String(spec.limits.pids),
    "--ulimit",
    "memlock=-1",
    "--stop-timeout",
    "10",
  ];
  const published = new Set<number>();
  for (const p of spec.publish ?? []) {
    // numbers only, checked here, so a port list can never carry an option or a second mapping
    if (!isPort(p.hostPort) || !isPort(p.containerPort)) throw new RefusedSpec(`not a port mapping: ${JSON.stringify(p).slice(0, 80)}`);
    if (p.hostIp !== undefined && !isIP(p.hostIp))
      throw new RefusedSpec(`not an address to publish on: ${JSON.stringify(p.hostIp).slice(0, 80)}`);
    if (published.has(p.hostPort)) throw new RefusedSpec(`host port ${p.hostPort} published twice`);
    published.add(p.hostPort);
    const ip = p.hostIp ? (isIP(p.hostIp) === 6 ? `[${p.hostIp}]:` : `${p.hostIp}:`) : "";
    args.push("--publish", `${ip}${p.hostPort}:${p.containerPort}/tcp`);
  }
  for (const m of spec.mounts ?? []) {
    if (!MOUNT_PATH.test(m.source) || !MOUNT_PATH.test(m.target) || m.source.includes("..") || m.target.includes("..")) {
      throw new RefusedSpec(`not a mount this agent makes: ${JSON.stringify(m).slice(0, 120)}`);
    }
    args.push("--mount", `type=bind,source=${m.source},target=${m.target},readonly`);
  }
  for (const [k, v] of Object.entries(spec.labels)) {
    if (!LABEL_KEY.test(k)) throw new RefusedSpec(`not a label key: ${k}`);
    args.push("--label", `${k}=${v}`);
  }
  for (const [k, v] of Object.entries(spec.env)) {
    if (!ENV_NAME.test(k)) throw new RefusedSpec(`not an environment variable name: ${k}`);
    args.push("--env", `${k}=${v}`);
  }
  args.push("--", spec.image);
  if (spec.command !== undefined) args.push("sh", "-c", spec.command);
  return args;
}

/** A node's share of CPU and memory for a placement: in proportion to the GPUs it holds. */
export function limitsFor(gpus: number, node: { gpus: number; cpuCores: number; memoryMb: number }): ResourceLimits {
  const share = Math.min(1, gpus / Math.max(1, node.gpus));
  return {
    cpus: Math.max(1, Math.floor(node.cpuCores * share)),
    // leave a tenth of the node's memory to the host, the agent and the driver
    memoryMb: Math.max(1024, Math.floor(node.memoryMb * 0.9 * share)),
    pids: 16_384,
  };
}

/** What the docker CLI may see of the agent's environment: where the engine is, never the agent's key. */
export function dockerClientEnv(source: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const out: Record<string, string> = {};
  for (const k of ["PATH", "HOME", "DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY"]) {
    const v = source[k];
    if (v) out[k] = v;
  }
  return out as NodeJS.ProcessEnv;
}

/** A container the agent started or found again. */
export interface Workload {
  onOutput(fn: (stream: "stdout" | "stderr", data: Buffer) => void): void;
  onExit(fn: (exitCode: number, error?: string) => void): void;
  stop(): void;
}

export interface Launcher {
  start(spec: ContainerSpec): Workload;
  /** whether a container of that name runs now (pods and replicas report once theirs is up) */
  isRunning(name: string): boolean;
  /** the running container's address on the workload network, where the access guard forwards to; null when it has none */
  address(name: string): string | null;
  /** finds a container of an earlier agent process by name: its outcome if it ended, or it running */
  adopt(name: string, sinceIso: string): Workload | null;
  /** removes an ended container once its outcome is recorded */
  remove(name: string): void;
  /**
   * removes a container and returns once it is gone: before a new container takes its name. An
   * asynchronous removal could land after the new container was created and remove that instead.
   */
  removeNow(name: string): void;
  /** the runtime and its version, for registration; null when no runtime answers */
  runtime(): string | null;
}

/** Runs containers with the docker CLI (the engine may be Docker or any daemon it talks to). */
export class DockerLauncher implements Launcher {
  private readonly env: NodeJS.ProcessEnv;

  constructor(env: Record<string, string | undefined> = dockerClientEnv(process.env)) {
    this.env = env as NodeJS.ProcessEnv;
  }

  runtime(): string | null {
    const r = spawnSync("docker", ["version", "--format", "{{.Server.Version}}"], { env: this.env, encoding: "utf8", timeout: 10_000 });
    return r.status === 0 && r.stdout.trim() ? `docker ${r.stdout.trim()}` : null;
  }

  /**
   * Makes sure the workload network exists (creating it with inter-container traffic off); the
   * reason when it cannot, in which case this node must not run containers.
   */
  prepareNetwork(): string | null {
    const opts = { env: this.env, encoding: "utf8" as const, timeout: 15_000 };
    const found = spawnSync("docker", ["network", "inspect", "--format", "{{json .Options}}", WORKLOAD_NETWORK], opts);
    if (found.status === 0) {
      // an existing network of that name must keep containers apart, whoever created it
      return /"com\.docker\.network\.bridge\.enable_icc":"false"/.test(found.stdout)
        ? null
        : `docker network ${WORKLOAD_NETWORK} exists but lets containers talk to each other; remove it (docker network rm ${WORKLOAD_NETWORK}) and restart the agent`;
    }
    const created = spawnSync(
      "docker",
      [
        "network",
        "create",
        "--driver",
        "bridge",
        "--opt",
        "com.docker.network.bridge.enable_icc=false",
        "--label",
        "io.gpuforge.role=workloads",
        WORKLOAD_NETWORK,
      ],
      opts,
    );
    return created.status === 0
      ? null
      : `cannot create docker network ${WORKLOAD_NETWORK}: ${(created.stderr || created.stdout).trim().slice(0, 300)}`;
  }

  start(spec: ContainerSpec): Workload {
    return this.attach(spawn("docker", dockerRunArgs(spec), { env: this.env, stdio: ["ignore", "pipe", "pipe"] }), spec.name);
  }

  adopt(name: string, sinceIso: string): Workload | null {
    const r = spawnSync("docker", ["inspect", "--format", "{{json .State}}", name], { env: this.env, encoding: "utf8", timeout: 15_000 });
    if (r.status !== 0) return null;
    let state: { Status?: string; ExitCode?: number };
    try {
      state = JSON.parse(r.stdout) as typeof state;
    } catch {
      return null;
    }
    const logs = spawn("docker", ["logs", "--follow", "--since", sinceIso, name], { env: this.env, stdio: ["ignore", "pipe", "pipe"] });
    if (state.Status !== "running") {
      // it ended while no agent was watching: its code is on record
      const w = this.attach(logs, name);
      return {
        ...w,
        onExit: (fn) =>
          logs.once("exit", () => fn(state.ExitCode ?? 125, state.Status === "exited" ? undefined : `container ${state.Status ?? "gone"}`)),
      };
    }
    const waiter = spawn("docker", ["wait", name], { env: this.env, stdio: ["ignore", "pipe", "ignore"] });
    let code = "";
    waiter.stdout!.on("data", (d: Buffer) => (code += d.toString()));
    const w = this.attach(logs, name);
    return { ...w, onExit: (fn) => waiter.once("close", () => fn(Number.parseInt(code.trim(), 10) || 0)) };
  }

  isRunning(name: string): boolean {
    const r = spawnSync("docker", ["inspect", "--format", "{{.State.Status}}", name], { env: this.env, encoding: "utf8", timeout: 15_000 });
    return r.status === 0 && r.stdout.trim() === "running";
  }

  address(name: string): string | null {
    const format = `{{with index .NetworkSettings.Networks "${WORKLOAD_NETWORK}"}}{{.IPAddress}}{{end}}`;
    const r = spawnSync("docker", ["inspect", "--format", format, name], { env: this.env, encoding: "utf8", timeout: 15_000 });
    const ip = r.status === 0 ? r.stdout.trim() : "";
    return isIP(ip) ? ip : null;
  }

  remove(name: string): void {
    spawn("docker", ["rm", "-f", name], { env: this.env, stdio: "ignore" }).once("error", () => {});
  }

  removeNow(name: string): void {
    spawnSync("docker", ["rm", "-f", name], { env: this.env, stdio: "ignore", timeout: 30_000 });
  }

  private attach(proc: ChildProcess, name: string): Workload {
    return {
      onOutput: (fn) => {
        proc.stdout?.on("data", (d: Buffer) => fn("stdout", d));
        proc.stderr?.on("data", (d: Buffer) => fn("stderr", d));
      },
      onExit: (fn) => {
        proc.once("error", (e) => fn(127, `the container runtime could not be started: ${e.message}`));
        // docker run answers 125 when the engine refused to start it (bad image, no such GPU, …)
        proc.once("exit", (code, signal) =>
          fn(
            code ?? 128,
            code === 125 ? "the container runtime refused to start the container" : signal ? `killed by ${signal}` : undefined,
          ),
        );
      },
      stop: () => {
        spawn("docker", ["stop", "--time", "10", name], { env: this.env, stdio: "ignore" }).once("error", () => {});
      },
    };
  }
}
