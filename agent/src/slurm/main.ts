// The GPUForge Slurm bridge: runs on a Slurm login or controller node and joins the whole Slurm
// cluster to GPUForge through Slurm's own tools (sinfo, scontrol, squeue, sbatch, scancel), with
// the cluster's agent key (`npm run slurm-bridge`, or installed by install.sh --slurm-bridge).
// Configuration, from the environment (install.sh writes it to /etc/gpuforge/slurm-bridge.env, 0600):
//   GPUFORGE_URL              control plane, e.g. https://gpuforge.example.com
//   GPUFORGE_AGENT_KEY        an agent key of the Slurm cluster (kind slurm), gf_…; never given to jobs
//   GPUFORGE_INGEST_URL       optional: heartbeats go to this ingest server (`npm run ingest`)
//   SLURM_CONF                Slurm's configuration, as Slurm's tools read it (default: theirs)
//   SLURM_BIN_DIR             optional: where sinfo, scontrol, squeue, sbatch, scancel and srun are
//   SLURM_BRIDGE_STATE_DIR    the bridge's placements, unsent reports and log spools (default ~/.gpuforge-slurm-bridge)
//   SLURM_OUTPUT_DIR          where jobs write their output: a directory every compute node writes and
//                             this host reads (a shared filesystem; default STATE_DIR/output)
//   SLURM_CONTAINER           oci | pyxis | wrapper | none: how tenant images run (default: oci when
//                             SLURM_OCI_BUNDLES is set, else none, and then no image or command runs)
//   SLURM_OCI_BUNDLES         oci: the directory of OCI bundles, one per image (see the docs)
//   SLURM_CONTAINER_WRAPPER   wrapper: a program run as `WRAPPER IMAGE [sh -c COMMAND]` inside each task
//   SLURM_PARTITIONS          optional: only these partitions' nodes are mirrored and submitted to
//   SLURM_GPU_TYPES           optional: GRES type → GPUForge GPU type, e.g. h100=H100,a100_80g=A100-80G
//   SLURM_GPU_MEMORY_MB       optional: GPU memory per GPU type, e.g. A100-80G=81920
//   SLURM_POLL_INTERVAL_S     default 10;  SLURM_PENDING_TIMEOUT_S default 300;  SLURM_HEARTBEAT_CONCURRENCY default 8
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createClient } from "../client";
import { LogSpool } from "../log-spool";
import { AGENT_VERSION } from "../version";
import { SlurmBook } from "./book";
import { SlurmBridge } from "./bridge";
import { cliTools } from "./cli";
import { parseGpuNaming } from "./mirror";
import { ReportQueue } from "./reports";
import type { ContainerSupport } from "./script";

const env = process.env;
const log = (m: string) => process.stderr.write(`${new Date().toISOString()} slurm-bridge: ${m}\n`);

function required(name: string): string {
  const v = env[name];
  if (!v) {
    log(`${name} is not set`);
    process.exit(2);
  }
  return v;
}

function number(name: string, fallback: number, min: number): number {
  const v = env[name] === undefined || env[name] === "" ? fallback : Number(env[name]);
  if (!Number.isFinite(v) || v < min) {
    log(`${name} must be a number of at least ${min}`);
    process.exit(2);
  }
  return v;
}

function containerSupport(): ContainerSupport {
  const mode = (env.SLURM_CONTAINER || (env.SLURM_OCI_BUNDLES ? "oci" : "none")).toLowerCase();
  if (mode === "oci") {
    if (!env.SLURM_OCI_BUNDLES) {
      log("SLURM_CONTAINER=oci needs SLURM_OCI_BUNDLES, the directory of the images' OCI bundles");
      process.exit(2);
    }
    return { mode, bundles: env.SLURM_OCI_BUNDLES };
  }
  if (mode === "wrapper") {
    if (!env.SLURM_CONTAINER_WRAPPER) {
      log("SLURM_CONTAINER=wrapper needs SLURM_CONTAINER_WRAPPER, the program that runs an image");
      process.exit(2);
    }
    return { mode, wrapper: env.SLURM_CONTAINER_WRAPPER };
  }
  if (mode === "pyxis" || mode === "none") return { mode };
  log(`SLURM_CONTAINER must be oci, pyxis, wrapper or none, not ${mode}`);
  process.exit(2);
}

/** The bridge's id, kept in its state directory: a restarted bridge is the same bridge (it keeps its claim). */
function bridgeId(stateDir: string): string {
  const file = path.join(stateDir, "bridge-id");
  if (existsSync(file)) {
    const id = readFileSync(file, "utf8").trim();
    if (/^[A-Za-z0-9-]{8,64}$/.test(id)) return id;
  }
  const id = randomUUID();
  writeFileSync(file, `${id}\n`, { mode: 0o600 });
  return id;
}

async function main() {
  if (process.argv.includes("--version")) {
    console.log(`gpuforge-slurm-bridge ${AGENT_VERSION}`);
    return;
  }
  const baseUrl = required("GPUFORGE_URL").replace(/\/$/, "");
  const key = required("GPUFORGE_AGENT_KEY");
  const stateDir = env.SLURM_BRIDGE_STATE_DIR ?? path.join(os.homedir(), ".gpuforge-slurm-bridge");
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const outputDir = env.SLURM_OUTPUT_DIR ?? path.join(stateDir, "output");
  mkdirSync(outputDir, { recursive: true });
  const intervalS = number("SLURM_POLL_INTERVAL_S", 10, 1);
  const client = createClient({ baseUrl, key, retryForMs: Infinity, log });
  const hot = env.GPUFORGE_INGEST_URL
    ? createClient({ baseUrl: env.GPUFORGE_INGEST_URL.replace(/\/$/, ""), key, retryForMs: Infinity, log })
    : client;
  const toolEnv = { ...env, PATH: env.SLURM_BIN_DIR ? `${env.SLURM_BIN_DIR}:${env.PATH ?? ""}` : env.PATH };
  const tools = cliTools({ env: toolEnv, binDir: env.SLURM_BIN_DIR || undefined });
  const bridge = new SlurmBridge({
    tools,
    client,
    hot,
    book: new SlurmBook(path.join(stateDir, "placements.json")),
    reports: new ReportQueue(path.join(stateDir, "reports.json"), log),
    logs: new LogSpool(path.join(stateDir, "logs"), { log }),
    baseUrl,
    bridgeId: bridgeId(stateDir),
    host: os.hostname(),
    version: AGENT_VERSION,
    user: os.userInfo().username,
    outputDir,
    container: containerSupport(),
    naming: parseGpuNaming(env.SLURM_GPU_TYPES, env.SLURM_GPU_MEMORY_MB),
    partitions: (env.SLURM_PARTITIONS ?? "")
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean),
    pendingTimeoutS: number("SLURM_PENDING_TIMEOUT_S", 300, 5),
    heartbeatConcurrency: number("SLURM_HEARTBEAT_CONCURRENCY", 8, 1),
    toolPath: toolEnv.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    log,
  });
  const { clusterId, config } = await bridge.start();
  log(
    `running Slurm cluster ${config.clusterName} (Slurm ${config.version ?? "?"}) as GPUForge cluster ${clusterId}; jobs' output in ${outputDir}`,
  );
  if (config.minJobAgeS !== null && config.minJobAgeS < 120)
    log(
      `warning: MinJobAge is ${config.minJobAgeS} s: Slurm may forget a job's end before the bridge sees it (keep it above the poll interval and the node lease)`,
    );
  // SLURM_BRIDGE_LOG_CYCLES=1: every cycle's time in the log (the benchmark reads it)
  const timeCycles = env.SLURM_BRIDGE_LOG_CYCLES === "1";
  let stopping = false;
  const shutdown = () => {
    stopping = true;
    // Slurm jobs keep running: the next bridge process (same state directory) follows them
    log("stopping; Slurm keeps running its jobs for the next bridge process");
    setTimeout(() => process.exit(0), 200);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
  while (!stopping) {
    const started = Date.now();
    try {
      const s = await bridge.cycle();
      if (s.submitted || s.cancelled || timeCycles)
        log(
          `cycle ${Date.now() - started} ms: ${s.nodes} node(s), ${s.heartbeats} heartbeat(s), ${s.submitted} submitted, ${s.cancelled} cancelled, ${s.reported} report(s)`,
        );
    } catch (e) {
      log(`cycle failed: ${(e as Error).message}`);
    }
    await new Promise((r) => setTimeout(r, Math.max(200, intervalS * 1000 - (Date.now() - started))));
  }
}

main().catch((e: unknown) => {
  log((e as Error).message);
  process.exit(1);
});
