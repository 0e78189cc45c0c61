import { spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import path from "node:path";
import { spawnHarness } from "../../scripts/lib/harness-clients";
import { ensureSystemTool } from "./system-packages";

// A real docker engine for the tests of the node agent (../shared/STACK.md): Debian's dockerd with
// its own data-root, exec-root and unix socket under a temporary directory (the CLI points at it
// with DOCKER_HOST), `--storage-driver=vfs`, and images imported from busybox-static — no registry.
//
// Where the machine allows it, the engine runs in a network namespace of its own, joined to this
// host by a veth pair in 198.18.0.0/15 (the range set aside for network tests, RFC 2544): that
// namespace is the GPU node. Docker manages iptables there as it does on a real node (so the
// workload network's inter-container isolation is enforced), nothing of this machine's own
// netfilter state is touched, and the node has an address of its own that the control plane
// (on this host) reaches, as a gateway reaches a node. The agent runs inside the namespace too.
// Where namespaces are refused, the engine runs on this host as STACK.md's recipe does
// (`--iptables=false`: inter-container isolation is then not enforced and not asserted); where no
// engine starts at all, the caller falls back to the stand-in. Either fallback is printed.
//
// Two flags of the agent's cannot work without a GPU host: `--gpus` (no NVIDIA runtime) and
// `--ulimit memlock=-1` (runc may not raise that limit here). A shim first on the agent's PATH
// drops exactly those two and passes everything else to the real CLI.

export interface DockerNode {
  mode: "netns" | "host";
  /** what the output says about the engine (printed by the caller) */
  description: string;
  /** DOCKER_HOST for the CLI */
  dockerHost: string;
  /** a directory to put first on the agent's PATH: the docker shim */
  shimDir: string;
  /** the node's address: what the agent registers and the gateway connects to */
  nodeAddress: string;
  /** where processes on the node reach this host (the control plane) */
  hostAddress: string;
  /** whether the engine enforces the workload network's inter-container isolation (its iptables are on) */
  enforcesIsolation: boolean;
  images: { busybox: string; serve: string; podHttpd: string };
  /** runs the docker CLI against this engine */
  docker(args: string[]): { status: number | null; stdout: string; stderr: string };
  /** starts a process on the node (inside its network namespace) */
  spawnOnNode(cmd: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess;
  /** forwards a port of the node's host address to a port of this host's loopback (the control plane) */
  forward(toPort: number): Promise<number>;
  stop(): Promise<void>;
}

const run = (cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; input?: Buffer } = {}) => {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 60_000, ...opts });
  return { status: r.status, stdout: r.stdout ?? "", stderr: (r.stderr ?? "") + (r.error ? String(r.error) : "") };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The docker CLI that came with the engine (Debian's docker.io), else whichever is on PATH. */
function dockerCli(): string {
  if (existsSync("/usr/bin/docker")) return "/usr/bin/docker";
  const found = run("sh", ["-c", "command -v docker"]).stdout.trim();
  if (!found) throw new Error("no docker CLI found");
  return found;
}

/** A network namespace with a veth pair to this host; null (and everything undone) when the machine refuses one. */
function makeNamespace(): { name: string; hostAddress: string; nodeAddress: string; hostIf: string } | null {
  const id = randomBytes(3).toString("hex");
  const name = `gfnode-${id}`;
  const [hostIf, nodeIf] = [`gfh${id}`, `gfn${id}`];
  const third = randomBytes(1)[0]!;
  const fourth = (randomBytes(1)[0]! % 63) * 4;
  const second = 18 + (randomBytes(1)[0]! % 2);
  const hostAddress = `198.${second}.${third}.${fourth + 1}`;
  const nodeAddress = `198.${second}.${third}.${fourth + 2}`;
  const steps: string[][] = [
    ["ip", "netns", "add", name],
    ["ip", "link", "add", hostIf, "type", "veth", "peer", "name", nodeIf],
    ["ip", "link", "set", nodeIf, "netns", name],
    ["ip", "addr", "add", `${hostAddress}/30`, "dev", hostIf],
    ["ip", "link", "set", hostIf, "up"],
    ["ip", "netns", "exec", name, "ip", "addr", "add", `${nodeAddress}/30`, "dev", nodeIf],
    ["ip", "netns", "exec", name, "ip", "link", "set", nodeIf, "up"],
    ["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"],
    ["ip", "netns", "exec", name, "ip", "route", "add", "default", "via", hostAddress],
  ];
  for (const step of steps) {
    const r = run(step[0]!, step.slice(1));
    if (r.status !== 0) {
      run("ip", ["netns", "del", name]);
      run("ip", ["link", "del", hostIf]);
      return null;
    }
  }
  return { name, hostAddress, nodeAddress, hostIf };
}

/** A rootfs of busybox and its applets, with files for the test images' web servers. */
function rootfs(dir: string): string {
  const root = path.join(dir, "rootfs");
  mkdirSync(path.join(root, "bin"), { recursive: true });
  writeFileSync(path.join(root, "bin", "busybox"), readFileSync("/bin/busybox"));
  chmodSync(path.join(root, "bin", "busybox"), 0o755);
  for (const applet of run("/bin/busybox", ["--list"]).stdout.split("\n").filter(Boolean)) {
    if (applet !== "busybox" && !existsSync(path.join(root, "bin", applet))) symlinkSync("busybox", path.join(root, "bin", applet));
  }
  mkdirSync(path.join(root, "www", "v1"), { recursive: true });
  mkdirSync(path.join(root, "tmp"), { recursive: true });
  writeFileSync(path.join(root, "www", "health"), "ok\n");
  writeFileSync(path.join(root, "www", "v1", "models"), '{"object":"list","data":[{"id":"test/busybox","object":"model"}]}\n');
  mkdirSync(path.join(root, "etc"), { recursive: true });
  writeFileSync(path.join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\n");
  return root;
}

const SHIM = `// The test's docker shim: drops the two flags that need a GPU host (--gpus VALUE, --ulimit memlock=…)
// from \`docker run\` and runs the real CLI with everything else, exactly as given.
import { spawn } from "node:child_process";
const [cli, ...args] = process.argv.slice(2);
const out = [];
for (let i = 0; i < args.length; i++) {
  if (args[0] === "run" && args.indexOf("--") > i) {
    if (args[i] === "--gpus") { i++; continue; }
    if (args[i] === "--ulimit" && /^memlock=/.test(args[i + 1] ?? "")) { i++; continue; }
  }
  out.push(args[i]);
}
const child = spawn(cli, out, { stdio: "inherit" });
child.on("error", () => process.exit(127));
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => process.exit(code ?? (signal === "SIGKILL" ? 137 : 143)));
`;

/**
 * Starts the engine (one per test file), imports the test images and writes the shim; returns the
 * reason instead when no engine can start here.
 */
export async function startDockerNode(): Promise<DockerNode | { unavailable: string }> {
  // to see the fallback work on a machine where the engine does start
  if (process.env.GPUFORGE_TEST_DOCKER === "standin") return { unavailable: "GPUFORGE_TEST_DOCKER=standin asked for the stand-in" };
  try {
    ensureSystemTool("dockerd", "busybox");
  } catch (e) {
    return { unavailable: (e as Error).message };
  }
  if (process.getuid?.() !== 0) return { unavailable: "dockerd needs root, and the tests do not run as root" };
  // short: a unix socket's path must stay under 108 bytes
  const dir = mkdtempSync("/tmp/gfdocker-");
  const cli = dockerCli();
  const ns = makeNamespace();
  const socket = path.join(dir, "docker.sock");
  const dockerHost = `unix://${socket}`;
  const daemonArgs = [
    "--data-root",
    path.join(dir, "data"),
    "--exec-root",
    path.join(dir, "exec"),
    "-H",
    dockerHost,
    "--pidfile",
    path.join(dir, "docker.pid"),
    "--storage-driver=vfs",
    ...(ns ? [] : ["--iptables=false"]),
  ];
  const log = path.join(dir, "dockerd.log");
  const logFd = openSync(log, "w");
  // nsenter switches the network namespace only (`ip netns exec` would also remount /sys, hiding the cgroups dockerd needs)
  const daemon = ns
    ? spawnHarness("dockerd", "nsenter", [`--net=/run/netns/${ns.name}`, "--", "dockerd", ...daemonArgs], {
        stdio: ["ignore", logFd, logFd],
        detached: true,
      })
    : spawnHarness("dockerd", "dockerd", daemonArgs, { stdio: ["ignore", logFd, logFd], detached: true });
  const env = { ...process.env, DOCKER_HOST: dockerHost };
  const docker = (args: string[]) => run(cli, args, { env });
  let up = false;
  for (let i = 0; i < 150 && !up && daemon.exitCode === null; i++) {
    up = existsSync(socket) && docker(["version", "--format", "{{.Server.Version}}"]).status === 0;
    if (!up) await sleep(200);
  }
  const forwards: net.Server[] = [];
  const stop = async () => {
    for (const f of forwards) f.close();
    const ids = docker(["ps", "-aq"]).stdout.split("\n").filter(Boolean);
    if (ids.length) docker(["rm", "-f", ...ids]);
    if (daemon.exitCode === null) {
      daemon.kill("SIGTERM");
      for (let i = 0; i < 100 && daemon.exitCode === null; i++) await sleep(200);
      if (daemon.exitCode === null) daemon.kill("SIGKILL");
    }
    // shims an engine killed hard leaves behind, and anything still mounted under the directory
    for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(dir)) process.kill(Number(pid), "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    const mounts = readFileSync("/proc/mounts", "utf8")
      .split("\n")
      .map((l) => l.split(" ")[1] ?? "")
      .filter((m) => m.startsWith(dir))
      .sort((a, b) => b.length - a.length);
    for (const m of mounts) run("umount", ["-l", m]);
    if (ns) run("ip", ["netns", "del", ns.name]);
    rmSync(dir, { recursive: true, force: true });
  };
  if (!up) {
    const why = readFileSync(log, "utf8").trim().split("\n").slice(-3).join(" | ");
    await stop();
    return { unavailable: `dockerd did not start: ${why || "no output"}` };
  }

  const root = rootfs(dir);
  const tar = spawnSync("tar", ["-C", root, "-c", "."], { maxBuffer: 64 * 1024 * 1024 });
  const images = { busybox: "gpuforge-test/busybox:1", serve: "gpuforge-test/serve:1", podHttpd: "gpuforge-test/pod-httpd:1" };
  const imports: Array<[string, string[]]> = [
    [images.busybox, ["ENV PATH=/bin"]],
    // a serving image: answers /health and /v1/models on the port the agent gives it
    [images.serve, ["ENV PATH=/bin", 'CMD ["sh", "-c", "exec httpd -f -p ${GPUFORGE_PORT:-8000} -h /www"]']],
    // a pod image whose own entrypoint serves port 8080
    [images.podHttpd, ["ENV PATH=/bin", 'CMD ["httpd", "-f", "-p", "8080", "-h", "/www"]']],
  ];
  for (const [name, changes] of imports) {
    const r = spawnSync(cli, ["import", ...changes.flatMap((c) => ["-c", c]), "-", name], { env, input: tar.stdout, encoding: "utf8" });
    if (r.status !== 0) {
      await stop();
      return { unavailable: `docker import ${name} failed: ${r.stderr}` };
    }
  }
  const shimDir = path.join(dir, "shim");
  mkdirSync(shimDir);
  writeFileSync(path.join(dir, "docker-shim.mjs"), SHIM);
  writeFileSync(
    path.join(shimDir, "docker"),
    `#!/bin/sh\nexec "${process.execPath}" "${path.join(dir, "docker-shim.mjs")}" "${cli}" "$@"\n`,
  );
  chmodSync(path.join(shimDir, "docker"), 0o755);

  const version = docker(["version", "--format", "{{.Server.Version}}"]).stdout.trim();
  return {
    mode: ns ? "netns" : "host",
    description: ns
      ? `real docker engine ${version} (vfs) in network namespace ${ns.name}: node ${ns.nodeAddress}, docker's iptables on`
      : `real docker engine ${version} (vfs) on this host with --iptables=false: network namespaces are refused here, so inter-container isolation is not enforced and not asserted`,
    dockerHost,
    shimDir,
    nodeAddress: ns?.nodeAddress ?? `127.${1 + (randomBytes(1)[0]! % 250)}.${randomBytes(1)[0]! % 250}.${1 + (randomBytes(1)[0]! % 250)}`,
    hostAddress: ns?.hostAddress ?? "127.0.0.1",
    enforcesIsolation: ns !== null,
    images,
    docker,
    spawnOnNode: (cmd, args, childEnv) =>
      ns
        ? spawnHarness(cmd, "nsenter", [`--net=/run/netns/${ns.name}`, "--", cmd, ...args], {
            env: childEnv,
            stdio: ["ignore", "pipe", "pipe"],
          })
        : spawnHarness(cmd, cmd, args, { env: childEnv, stdio: ["ignore", "pipe", "pipe"] }),
    forward: async (toPort) => {
      const server = net.createServer((client) => {
        const upstream = net.connect(toPort, "127.0.0.1");
        client.pipe(upstream).pipe(client);
        const end = () => (client.destroy(), upstream.destroy());
        client.on("error", end);
        upstream.on("error", end);
      });
      forwards.push(server);
      await new Promise<void>((resolve) => server.listen(0, ns?.hostAddress ?? "127.0.0.1", () => resolve()));
      return (server.address() as net.AddressInfo).port;
    },
    stop,
  };
}
