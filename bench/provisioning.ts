// `npm run bench:provisioning`: provisioning steps per second against the simulated BMCs. Prints one
// JSON object:
//   nodes                      BENCH_PROVISION_NODES nodes (64; 4 with BENCH_SMOKE=1), each with its
//                              own simulated Redfish BMC (agent/src/sim-bmc.ts, virtual media on the
//                              Manager for half, on the System for the other half) whose boot brings
//                              the node's agent back, as the simulator's does
//   workflow.*                 the real thing: every node provisioned at once by the provisioning
//                              runner (lib/provisioning), sweeping as the background job does, each
//                              visit holding the node's lease and writing every step under its
//                              fencing token: steps finished per second, the p50/p99 of a step,
//                              Redfish requests per step, and the provisionings that did not succeed
//                              (must be 0)
//   client_only.*              the baseline measured in the same run: the same six Redfish steps per
//                              node through the same client, with no database, lease or records —
//                              what the BMCs and the client allow; workflow ÷ client_only is what the
//                              leases, fences and step records cost
//   raw_get_per_s              the simulated BMCs' own ceiling: authenticated GETs of a system, a
//                              fresh connection each (as the client makes them), CLIENTS at a time
// Runs alternate (client_only, workflow, client_only, workflow) so a noisy neighbour shows in both.
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { startSimBmc, type SimBmc } from "../agent/src/sim-bmc";
import { systemActor } from "@/lib/auth/principal";
import { putBmc } from "@/lib/bmc/put-bmc";
import { putBmcBody } from "@/lib/bmc/schemas";
import { createCluster } from "@/lib/fleet/create-cluster";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { db, disconnectDb } from "@/lib/db/client";
import { parseCidrList } from "@/lib/http/client-address";
import { advanceProvisionings } from "@/lib/provisioning/advance-provisionings";
import { startProvisioning } from "@/lib/provisioning/start-provisioning";
import { RedfishClient, type RedfishTiming } from "@/lib/redfish/client";
import {
  discoverManager,
  discoverSystem,
  ejectMedia,
  findCdMedia,
  insertMedia,
  setOneTimeCdBoot,
  setPower,
} from "@/lib/redfish/operations";
import { ensureDatabase, freePort, startEmbeddedDatabase } from "../scripts/lib/embedded-db";
import { runMigrations } from "../scripts/lib/run-migrations";
import { percentile, round } from "./lib/harness";
import { flag, SMOKE } from "./lib/report";

const NODES = Number(process.env.BENCH_PROVISION_NODES ?? (SMOKE ? 4 : 64));
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
const RAW_SECONDS = SMOKE ? 1 : 5;
const IMAGE = "http://images.example/bench-node.iso";
const timing: Partial<RedfishTiming> = { powerPollMs: 10, taskPollMs: 10, backoffMs: 10, maxBackoffMs: 100, retries: 3 };
const simTiming = { powerMs: 20, bootMs: 20, taskMs: 40 };

type Bmcs = Array<{ nodeId: string; bmc: SimBmc }>;

async function fleet(n: number, tag: string): Promise<Bmcs> {
  const cluster = await createCluster(systemActor, { name: `bench-${tag}-${Date.now()}`, region: "bench", provider: "bench" });
  const agent = {
    principal: { kind: "agent" as const, clusterId: cluster.id, keyId: "00000000-0000-4000-8000-0000000000be", label: "bench agent" },
  };
  const out: Bmcs = [];
  for (let i = 0; i < n; i++) {
    const hostname = `bench-${tag}-${i}`;
    const { node } = await registerNode(agent, { hostname, gpus: [] });
    const bmc = await startSimBmc({
      hostname,
      mediaOn: i % 2 ? "System" : "Manager",
      resetInfo: i % 2 ? "action_info" : "inline",
      timing: simTiming,
      on: { booted: () => void recordHeartbeat(agent, node.id, {}).catch(() => undefined) },
    });
    await putBmc(
      systemActor,
      node.id,
      putBmcBody.parse({ url: bmc.url, username: bmc.username, password: bmc.password, verify_tls: false }),
    );
    out.push({ nodeId: node.id, bmc });
  }
  return out;
}

const requests = (bmcs: Bmcs) => bmcs.reduce((sum, b) => sum + Object.values(b.bmc.requests).reduce((x, y) => x + y, 0), 0);

/** The real workflow: start every provisioning, then sweep until none runs. */
async function workflow(bmcs: Bmcs) {
  const before = requests(bmcs);
  const t0 = performance.now();
  const ids = [];
  for (const b of bmcs) ids.push((await startProvisioning(systemActor, b.nodeId, { image_url: IMAGE })).id);
  const deadline = Date.now() + 600_000;
  for (;;) {
    const r = await advanceProvisionings({
      concurrency: CLIENTS,
      inlineWaitMs: 2_000,
      timing,
      budgetMs: 60_000,
      agentPollMs: 20,
      retryBackoffMs: 100,
    });
    // done when each one failed or handed its node to inspection (its last step succeeded)
    const over =
      (await db().nodeWorkflow.count({ where: { id: { in: ids }, status: { not: "running" } } })) +
      (await db().nodeWorkflowStep.count({ where: { workflowId: { in: ids }, name: "wait_for_agent", status: "succeeded" } }));
    if (r.due === 0 && over === ids.length) break;
    if (Date.now() > deadline) {
      const stuck = await db().nodeWorkflowStep.findMany({
        where: { workflowId: { in: ids }, status: "running" },
        select: { name: true, message: true },
      });
      throw new Error(`the provisionings did not finish in 10 min: ${JSON.stringify(stuck.slice(0, 5))}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const seconds = (performance.now() - t0) / 1000;
  const steps = await db().nodeWorkflowStep.findMany({
    where: { workflowId: { in: ids } },
    select: { startedAt: true, finishedAt: true, status: true },
  });
  const failed = await db().nodeWorkflow.count({ where: { id: { in: ids }, status: { not: "running" } } });
  const ms = steps
    .filter((s) => s.finishedAt)
    .map((s) => s.finishedAt!.getTime() - s.startedAt.getTime())
    .sort((a, b) => a - b);
  return {
    seconds: round(seconds, 2),
    steps: steps.length,
    steps_per_s: round(steps.length / seconds),
    step_p50_ms: percentile(ms, 50),
    step_p99_ms: percentile(ms, 99),
    redfish_requests_per_step: round((requests(bmcs) - before) / steps.length),
    not_succeeded: failed,
  };
}

/** The baseline: the same Redfish steps per node through the same client, nothing recorded. */
async function clientOnly(bmcs: Bmcs) {
  const policy = { networks: parseCidrList("127.0.0.0/8")! };
  let steps = 0;
  const before = requests(bmcs);
  const t0 = performance.now();
  const queue = [...bmcs];
  await Promise.all(
    Array.from({ length: Math.min(CLIENTS, queue.length) }, async () => {
      for (let b = queue.shift(); b; b = queue.shift()) {
        const c = new RedfishClient(
          { url: b.bmc.url, username: b.bmc.username, password: b.bmc.password, verifyTls: false, policy },
          { timing },
        );
        await c.connect();
        const system = await discoverSystem(c, {});
        const cd = await findCdMedia(c, system, await discoverManager(c, system));
        await setPower(c, system.path, "off", { wait: true });
        await ejectMedia(c, cd.media.path);
        await insertMedia(c, cd.media.path, IMAGE);
        await setOneTimeCdBoot(c, system.path);
        await setPower(c, system.path, "on", { wait: true });
        await c.close();
        steps += 6;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return {
    seconds: round(seconds, 2),
    steps,
    steps_per_s: round(steps / seconds),
    redfish_requests_per_step: round((requests(bmcs) - before) / steps),
  };
}

/** Authenticated GETs of each BMC's system, a fresh connection each, CLIENTS at a time. */
async function rawGets(bmcs: Bmcs): Promise<number> {
  const until = performance.now() + RAW_SECONDS * 1000;
  let n = 0;
  const get = (b: SimBmc) =>
    new Promise<void>((resolve, reject) => {
      const auth = `Basic ${Buffer.from(`${b.username}:${b.password}`).toString("base64")}`;
      http
        .get(
          `${b.url}/redfish/v1/Systems/${b.systemId}`,
          { agent: false, headers: { authorization: auth, connection: "close" } },
          (res) => {
            res.resume();
            res.on("end", () => resolve());
          },
        )
        .on("error", reject);
    });
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, i) => {
      for (let k = i; performance.now() < until; k++) {
        await get(bmcs[k % bmcs.length]!.bmc);
        n++;
      }
    }),
  );
  return round(n / RAW_SECONDS);
}

async function main() {
  const tempDir = mkdtempSync(path.join(os.tmpdir(), "gpuforge-bench-provisioning-"));
  const server = process.env.DATABASE_URL
    ? { serverUrl: process.env.DATABASE_URL, discard: async () => {} }
    : await startEmbeddedDatabase({ dataDir: path.join(tempDir, "pg"), port: await freePort(), ephemeral: true, log: () => {} });
  const all: SimBmc[] = [];
  try {
    const databaseUrl = await ensureDatabase(server.serverUrl, `gpuforge_bench_${Date.now().toString(36)}`);
    await runMigrations(databaseUrl);
    Object.assign(process.env, {
      DATABASE_URL: databaseUrl,
      BMC_NETWORKS: "127.0.0.0/8",
      SETTINGS_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64"),
      LOG_LEVEL: "error",
    });
    const runs: Array<{ client_only: Awaited<ReturnType<typeof clientOnly>>; workflow: Awaited<ReturnType<typeof workflow>> }> = [];
    for (let round_ = 0; round_ < 2; round_++) {
      const a = await fleet(NODES, `c${round_}`);
      const b = await fleet(NODES, `w${round_}`);
      all.push(...a.map((x) => x.bmc), ...b.map((x) => x.bmc));
      runs.push({ client_only: await clientOnly(a), workflow: await workflow(b) });
    }
    const raw = await rawGets((await fleet(Math.min(NODES, 16), "raw")).map((x) => (all.push(x.bmc), x)));
    const best = (k: "client_only" | "workflow") => runs.map((r) => r[k]).sort((x, y) => y.steps_per_s - x.steps_per_s)[0]!;
    const wf = best("workflow");
    const co = best("client_only");
    console.log(
      JSON.stringify(
        {
          nodes: NODES,
          clients: CLIENTS,
          smoke: flag(SMOKE),
          workflow: wf,
          client_only: co,
          workflow_vs_client_only: round(wf.steps_per_s / co.steps_per_s, 2),
          raw_get_per_s: raw,
          runs,
          cores: os.cpus().length,
        },
        null,
        2,
      ),
    );
    if (runs.some((r) => r.workflow.not_succeeded > 0)) process.exitCode = 1;
  } finally {
    await Promise.all(all.map((b) => b.close()));
    await disconnectDb();
    await server.discard();
    rmSync(tempDir, { recursive: true, force: true });
  }
}

await main();
