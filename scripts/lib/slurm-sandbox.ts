// A real Slurm on this one machine, for the tests and the benchmark (../shared/STACK.md): its own
// munged (own key and socket), a slurmctld and one `slurmd -N` per simulated node, every path
// under a temporary directory and every port free, so several can run side by side and nothing
// touches a Slurm or munge of the host. GPUs are GRES with device files made with mknod (Slurm
// requires File= for gpu). Optionally Slurm's own container support (oci.conf) over runc, with a
// busybox bundle, so tenant images really run in containers. Everything it starts it stops: the
// daemons by their pid files, and whatever they left running (slurmstepd and its job processes)
// found by this sandbox's own SLURM_CONF in their environment.
import { execFile, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "./embedded-db";

const exec = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface SandboxNode {
  name: string;
  gpus: number;
  /** GRES type (default h100) */
  gpuType?: string;
  cpus?: number;
  partitions?: string[];
}

export interface SlurmSandboxOptions {
  nodes: SandboxNode[];
  /** extra partitions beyond the default `gpu` one over every node */
  partitions?: Array<{ name: string; nodes: string[]; maxTimeMin?: number; isDefault?: boolean }>;
  /** seconds before Slurm declares a silent slurmd down (and its jobs NODE_FAIL) */
  slurmdTimeoutS?: number;
  /** Slurm's own container support through runc, with OCI bundles under `bundles` */
  containers?: boolean;
  clusterName?: string;
  log?: (line: string) => void;
}

export interface SlurmSandbox {
  dir: string;
  conf: string;
  clusterName: string;
  /** the environment Slurm's tools need (SLURM_CONF), to merge into a child's */
  env: Record<string, string>;
  nodes: SandboxNode[];
  /** OCI bundles by image name (containers: true) */
  bundles: string;
  /**
   * A container wrapper as sites configure one (SLURM_CONTAINER_WRAPPER): `WRAPPER IMAGE cmd…` runs
   * the command inside the image's root filesystem, in PID and mount namespaces of its own
   * (util-linux unshare and chroot), the way apptainer or podman would.
   */
  wrapper: string;
  /** where jobs' output files go */
  outputDir: string;
  /** a command-line tool of Slurm's, as this sandbox's client */
  tool(name: string, args: string[], input?: string): Promise<{ stdout: string; stderr: string; code: number }>;
  /** SIGKILLs one node's slurmd (its job steps keep running, as on a real node that lost its daemon) */
  killSlurmd(node: string): void;
  startSlurmd(node: string): Promise<void>;
  /** Waits until every node (or those named) is in a state whose text matches `state`. */
  waitForNodes(state: RegExp, names?: string[], timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const SLURMCTLD = "/usr/sbin/slurmctld";
const SLURMD = "/usr/sbin/slurmd";
/** runc, as Slurm's oci.conf calls it (PATH) */
const RUNC = "runc";
const MUNGED = "/usr/sbin/munged";

function readPid(file: string): number | null {
  try {
    const n = Number(readFileSync(file, "utf8").trim());
    return Number.isInteger(n) && n > 1 ? n : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function stopPid(pid: number | null, waitMs = 3000): Promise<void> {
  if (!pid || !alive(pid)) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  const deadline = Date.now() + waitMs;
  while (alive(pid) && Date.now() < deadline) await sleep(50);
  if (alive(pid)) process.kill(pid, "SIGKILL");
}

/** Processes whose environment names this sandbox's slurm.conf, and everything below them. */
function strays(conf: string): number[] {
  const marker = `SLURM_CONF=${conf}`;
  const parents = new Map<number, number>();
  const marked = new Set<number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      parents.set(pid, Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      if (readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(marker)) marked.add(pid);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  const out = new Set(marked);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, ppid] of parents) {
      if (out.has(pid) || !out.has(ppid)) continue;
      out.add(pid);
      grew = true;
    }
  }
  return [...out];
}

function bundle(dir: string): void {
  // a busybox root: sh, echo, cat, sleep, env… (busybox-static), and the OCI config runc wants
  const rootfs = path.join(dir, "rootfs");
  mkdirSync(path.join(rootfs, "bin"), { recursive: true });
  for (const d of ["proc", "dev", "sys", "tmp", "etc"]) mkdirSync(path.join(rootfs, d), { recursive: true });
  copyFileSync("/bin/busybox", path.join(rootfs, "bin", "busybox"));
  chmodSync(path.join(rootfs, "bin", "busybox"), 0o755);
  for (const applet of [
    "sh",
    "echo",
    "cat",
    "sleep",
    "env",
    "ls",
    "id",
    "true",
    "false",
    "printf",
    "seq",
    "head",
    "yes",
    "hostname",
    "kill",
  ])
    symlinkSync("busybox", path.join(rootfs, "bin", applet));
  writeFileSync(path.join(rootfs, "etc", "hostname"), "gpuforge-test\n");
  const spec = spawnSync(RUNC, ["spec"], { cwd: dir, encoding: "utf8" });
  if (spec.status !== 0) throw new Error(`runc spec failed: ${spec.stderr}`);
  const config = JSON.parse(readFileSync(path.join(dir, "config.json"), "utf8")) as {
    process: { terminal: boolean; env: string[] };
    root: { readonly: boolean };
  };
  config.process.terminal = false;
  config.root.readonly = false;
  config.process.env = ["PATH=/bin"];
  writeFileSync(path.join(dir, "config.json"), JSON.stringify(config, null, 1));
}

export async function startSlurmSandbox(opts: SlurmSandboxOptions): Promise<SlurmSandbox> {
  const log = opts.log ?? (() => {});
  const dir = mkdtempSync(path.join(os.tmpdir(), "gf-slurm-"));
  chmodSync(dir, 0o755);
  const conf = path.join(dir, "slurm.conf");
  const clusterName = opts.clusterName ?? `gf${randomBytes(3).toString("hex")}`;
  const host = os.hostname().split(".")[0]!;
  const sub = (...p: string[]) => path.join(dir, ...p);
  for (const d of ["state", "log", "dev", "out", "runc", "bundles"]) mkdirSync(sub(d), { recursive: true });
  chmodSync(sub("out"), 0o777);
  for (const n of opts.nodes) mkdirSync(sub("spool", n.name), { recursive: true });

  // munge: a key and a socket of its own (owner munge, as munged insists)
  const mungeDir = sub("munge");
  mkdirSync(mungeDir, { mode: 0o700 });
  writeFileSync(path.join(mungeDir, "munge.key"), randomBytes(1024), { mode: 0o400 });
  try {
    const id = spawnSync("id", ["-u", "munge"], { encoding: "utf8" });
    const gid = spawnSync("id", ["-g", "munge"], { encoding: "utf8" });
    if (id.status === 0) {
      chownSync(mungeDir, Number(id.stdout), Number(gid.stdout));
      chownSync(path.join(mungeDir, "munge.key"), Number(id.stdout), Number(gid.stdout));
    }
  } catch {
    // not root: munged runs as the caller with --force
  }
  const socket = path.join(mungeDir, "munge.sock");
  const munge = spawnSync(
    MUNGED,
    [
      "--force",
      `--socket=${socket}`,
      `--key-file=${path.join(mungeDir, "munge.key")}`,
      `--pid-file=${path.join(mungeDir, "munged.pid")}`,
      `--log-file=${path.join(mungeDir, "munged.log")}`,
      `--seed-file=${path.join(mungeDir, "munged.seed")}`,
    ],
    { encoding: "utf8" },
  );
  if (munge.status !== 0) throw new Error(`munged did not start: ${munge.stderr}`);
  // from here on, a failure stops what was started
  const daemonPids = () => [...opts.nodes.map((n) => sub(`slurmd-${n.name}.pid`)), sub("slurmctld.pid"), path.join(mungeDir, "munged.pid")];
  const abandon = async (e: unknown): Promise<never> => {
    await Promise.all(daemonPids().map((f) => stopPid(readPid(f), 500)));
    rmSync(dir, { recursive: true, force: true });
    throw e;
  };

  const ctldPort = await freePort();
  const ports = new Map<string, number>();
  for (const n of opts.nodes) ports.set(n.name, await freePort());

  // GPUs: one character device per GPU (Slurm requires File= for gpu GRES), numbered fleet-wide
  let minor = 0;
  const gres: string[] = [];
  for (const n of opts.nodes) {
    if (n.gpus === 0) continue;
    const first = minor;
    for (let i = 0; i < n.gpus; i++) {
      const file = sub("dev", `nvidia${minor}`);
      const r = spawnSync("mknod", [file, "c", "195", String(minor)], { encoding: "utf8" });
      if (r.status !== 0) await abandon(new Error(`mknod ${file} failed: ${r.stderr}`));
      minor++;
    }
    gres.push(`NodeName=${n.name} Name=gpu Type=${n.gpuType ?? "h100"} File=${sub("dev")}/nvidia[${first}-${minor - 1}]`);
  }
  const timeout = opts.slurmdTimeoutS ?? 10;
  const lines = [
    `ClusterName=${clusterName}`,
    `SlurmctldHost=${host}`,
    `SlurmctldPort=${ctldPort}`,
    `SlurmdPort=${ports.values().next().value ?? ctldPort + 1}`,
    "SlurmUser=root",
    "SlurmdUser=root",
    "AuthType=auth/munge",
    `AuthInfo=socket=${socket}`,
    "CredType=cred/munge",
    `StateSaveLocation=${sub("state")}`,
    `SlurmdSpoolDir=${sub("spool")}/%n`,
    `SlurmctldPidFile=${sub("slurmctld.pid")}`,
    `SlurmdPidFile=${sub("slurmd-%n.pid")}`,
    `SlurmctldLogFile=${sub("log", "slurmctld.log")}`,
    `SlurmdLogFile=${sub("log", "slurmd-%n.log")}`,
    "ProctrackType=proctrack/linuxproc",
    "TaskPlugin=task/none",
    "SelectType=select/cons_tres",
    "SelectTypeParameters=CR_Core",
    "GresTypes=gpu",
    "AccountingStorageType=accounting_storage/none",
    "JobAcctGatherType=jobacct_gather/none",
    "JobCompType=jobcomp/none",
    "MpiDefault=none",
    "SchedulerType=sched/backfill",
    // heterogeneous jobs are scheduled by the backfill pass: run it every second
    "SchedulerParameters=bf_interval=1,sched_min_interval=100000",
    "ReturnToService=2",
    `SlurmdTimeout=${timeout}`,
    "SlurmctldTimeout=10",
    "InactiveLimit=0",
    "MinJobAge=300",
    "KillWait=2",
    "MessageTimeout=5",
    "PrologFlags=Alloc",
    // simulated nodes may claim more CPUs than this machine has: slurmd reports what slurm.conf says
    "SlurmdParameters=config_overrides",
    ...opts.nodes.map(
      (n) =>
        `NodeName=${n.name} NodeHostname=${host} Port=${ports.get(n.name)} CPUs=${n.cpus ?? 2} RealMemory=1000${n.gpus ? ` Gres=gpu:${n.gpuType ?? "h100"}:${n.gpus}` : ""} State=UNKNOWN`,
    ),
    `PartitionName=gpu Nodes=${opts.nodes.map((n) => n.name).join(",")} Default=YES MaxTime=INFINITE State=UP`,
    ...(opts.partitions ?? []).map(
      (p) =>
        `PartitionName=${p.name} Nodes=${p.nodes.join(",")} Default=${p.isDefault ? "YES" : "NO"} MaxTime=${p.maxTimeMin ?? "INFINITE"} State=UP`,
    ),
  ];
  writeFileSync(conf, `${lines.join("\n")}\n`);
  writeFileSync(sub("gres.conf"), `${gres.join("\n")}\n`);
  if (opts.containers) {
    // Slurm's container support (slurm.schedmd.com/containers.html): runc runs each step's bundle
    const runc = `runc --root=${sub("runc")}`;
    writeFileSync(
      sub("oci.conf"),
      [
        `RunTimeQuery="${runc} state %n.%u.%j.%s"`,
        // SIGKILL: a container's PID 1 ignores SIGTERM unless it handles it, and Slurm asks only once
        `RunTimeKill="${runc} kill -a %n.%u.%j.%s KILL"`,
        `RunTimeDelete="${runc} delete --force %n.%u.%j.%s"`,
        `RunTimeRun="${runc} run %n.%u.%j.%s -b %b"`,
        "",
      ].join("\n"),
    );
    try {
      bundle(sub("bundles", "busybox_latest"));
    } catch (e) {
      await abandon(e);
    }
    mkdirSync(sub("bin"));
    writeFileSync(
      sub("bin", "gf-image-run"),
      [
        "#!/bin/sh",
        "# The test cluster's container wrapper: IMAGE [command…] runs inside the image's root, in its own PID and mount namespaces",
        "set -eu",
        'image="$1"; shift',
        `root="${sub("bundles")}/$(printf '%s' "$image" | sed 's/[^A-Za-z0-9._-]/_/g')/rootfs"`,
        '[ -d "$root" ] || { echo "gf-image-run: no image $image" >&2; exit 125; }',
        // its own /proc, and the host's /dev (the GPUs' device files among them), then its root
        `exec unshare --pid --fork --mount /bin/sh -c 'mount --rbind /dev "$0/dev" && mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$root" "$@"`,
        "",
      ].join("\n"),
      { mode: 0o755 },
    );
  }
  const env = { SLURM_CONF: conf };
  const childEnv = { ...process.env, ...env };

  const started = Date.now();
  const ctld = spawnSync(SLURMCTLD, ["-i"], { env: childEnv, encoding: "utf8" });
  if (ctld.status !== 0) await abandon(new Error(`slurmctld did not start: ${ctld.stderr}`));
  const startSlurmd = async (name: string) => {
    const r = spawnSync(SLURMD, ["-N", name], { env: childEnv, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`slurmd -N ${name} did not start: ${r.stderr}`);
  };
  for (const n of opts.nodes) await startSlurmd(n.name).catch(abandon);

  const tool = async (name: string, args: string[], input?: string) => {
    try {
      const child = exec(name, args, { env: childEnv, timeout: 30_000, maxBuffer: 64 * 1024 * 1024 });
      if (input !== undefined) {
        child.child.stdin?.end(input);
      }
      const { stdout, stderr } = await child;
      return { stdout, stderr, code: 0 };
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string; code?: number };
      return { stdout: err.stdout ?? "", stderr: err.stderr ?? String(e), code: typeof err.code === "number" ? err.code : 1 };
    }
  };
  const waitForNodes = async (state: RegExp, names = opts.nodes.map((n) => n.name), timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      const r = await tool("sinfo", ["-h", "-N", "-O", "NodeList:|,StateComplete:|"]);
      last = r.stdout + r.stderr;
      const states = new Map(
        r.stdout
          .split("\n")
          .filter(Boolean)
          .map((l) => l.split("|") as [string, string]),
      );
      if (names.every((n) => state.test(states.get(n) ?? ""))) return;
      await sleep(200);
    }
    throw new Error(`Slurm nodes did not reach ${state}: ${last}`);
  };
  await waitForNodes(/^idle$/).catch(abandon);
  log(`[slurm] ${clusterName}: slurmctld and ${opts.nodes.length} slurmd up in ${Date.now() - started} ms (${conf})`);

  let stopped = false;
  return {
    dir,
    conf,
    clusterName,
    env,
    nodes: opts.nodes,
    bundles: sub("bundles"),
    wrapper: sub("bin", "gf-image-run"),
    outputDir: sub("out"),
    tool,
    killSlurmd(name) {
      const pid = readPid(sub(`slurmd-${name}.pid`));
      if (pid && alive(pid)) process.kill(pid, "SIGKILL");
    },
    startSlurmd,
    waitForNodes,
    async stop() {
      if (stopped) return;
      stopped = true;
      // the jobs first, while the daemons can still end them cleanly
      const ids = (await tool("squeue", ["-h", "-o", "%A"])).stdout.split("\n").filter(Boolean);
      if (ids.length) await tool("scancel", ids);
      for (let i = 0; i < 20 && (await tool("squeue", ["-h", "-t", "R,CG", "-o", "%A"])).stdout.trim(); i++) await sleep(100);
      // the daemons together, each given a second to stop before it is killed
      await Promise.all(
        [...opts.nodes.map((n) => sub(`slurmd-${n.name}.pid`)), sub("slurmctld.pid")].map((f) => stopPid(readPid(f), 1000)),
      );
      await stopPid(readPid(path.join(mungeDir, "munged.pid")), 1000);
      for (const pid of strays(conf))
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    },
  };
}
