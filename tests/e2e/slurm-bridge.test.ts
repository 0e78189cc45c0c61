import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { parseJobDetail } from "@/agent/src/slurm/parse";
import { db } from "@/lib/db/client";
import { startSlurmSandbox, type SlurmSandbox } from "../../scripts/lib/slurm-sandbox";
import { axeViolations } from "../support/axe";
import { launchBrowser, openPage, shot } from "../support/browser";
import { makeKey, makeTenant, makeUser, unique } from "../support/fixtures";
import { api } from "../support/http";
import { eventually, startBridge, type RunningBridge } from "../support/slurm-bridge";
import { ensureSystemTool } from "../support/system-packages";

// GPUForge and a real Slurm (Debian's slurm-wlm 22.05 with munge: a slurmctld and four slurmd -N
// on this host, GPUs as GRES on mknod devices, tenant images through Slurm's own container support
// over runc), joined by the Slurm bridge as an operator runs it. GPUForge places, Slurm runs: the
// tests submit through GPUForge's API and watch both sides.

let slurm: SlurmSandbox;
let bridge: RunningBridge;
/** a second, small Slurm whose bridge runs images through a container wrapper, not Slurm's --container */
let slurmW: SlurmSandbox;
let bridgeW: RunningBridge;
let clusterW: string;
let stateDir: string;
let stateDirW: string;
let clusterId: string;
let agentKey: string;
let operatorKey: string;
let tenantKey: string;
let tenantId: string;
/** a GPU type of this file's own: no other test's queued work lands on this Slurm */
const GPU_TYPE = unique("SL").replace(/-/g, "").slice(0, 12).toUpperCase();
const GPU_TYPE_W = unique("SW").replace(/-/g, "").slice(0, 12).toUpperCase();
const NODES = ["sn1", "sn2", "sn3", "sn4"];
const baseUrl = () => inject("baseUrl");

function launch() {
  bridge = startBridge({ slurm, baseUrl: baseUrl(), key: agentKey, stateDir, env: { SLURM_GPU_TYPES: `h100=${GPU_TYPE}` } });
}
const why = () => `bridge log:\n${bridge?.log() ?? ""}\nwrapper bridge log:\n${bridgeW?.log() ?? ""}`;

beforeAll(async () => {
  ensureSystemTool("slurm", "munge");
  slurm = await startSlurmSandbox({
    nodes: NODES.map((name) => ({ name, gpus: 2, cpus: 4 })),
    partitions: [{ name: "short", nodes: ["sn1", "sn2"], maxTimeMin: 10 }],
    slurmdTimeoutS: 5,
    containers: true,
  });
  operatorKey = (await makeKey({ scope: "operator" })).key;
  const created = await api("POST", "/api/clusters", { key: operatorKey, body: { name: unique("slurm"), kind: "slurm" } });
  expect(created.status).toBe(201);
  expect(created.body.cluster.kind).toBe("slurm");
  clusterId = created.body.cluster.id;
  agentKey = (await makeKey({ scope: "agent", cluster_id: clusterId })).key;
  const tenant = await makeTenant(16);
  tenantId = tenant.id;
  tenantKey = (await makeKey({ scope: "tenant", tenant_id: tenant.id })).key;
  stateDir = mkdtempSync(path.join(os.tmpdir(), "gf-bridge-"));
  launch();
  slurmW = await startSlurmSandbox({ nodes: ["sw1", "sw2"].map((name) => ({ name, gpus: 2, cpus: 4 })), containers: true });
  const w = await api("POST", "/api/clusters", { key: operatorKey, body: { name: unique("slurm-w"), kind: "slurm" } });
  clusterW = w.body.cluster.id;
  bridgeW = startBridge({
    slurm: slurmW,
    baseUrl: baseUrl(),
    key: (await makeKey({ scope: "agent", cluster_id: clusterW })).key,
    stateDir: (stateDirW = mkdtempSync(path.join(os.tmpdir(), "gf-bridge-w-"))),
    env: { SLURM_GPU_TYPES: `h100=${GPU_TYPE_W}`, SLURM_CONTAINER: "wrapper", SLURM_CONTAINER_WRAPPER: slurmW.wrapper },
  });
}, 120_000);

afterAll(async () => {
  await bridge?.kill();
  await bridgeW?.kill();
  await slurm?.stop();
  await slurmW?.stop();
  for (const d of [stateDir, stateDirW]) if (d) rmSync(d, { recursive: true, force: true });
});

// a failing test leaves nothing running for the next: the tenant's live work is cancelled first
beforeEach(async () => {
  const live = await db().job.findMany({ where: { tenantId, status: { in: ["queued", "running", "blocked"] } }, select: { id: true } });
  for (const j of live.filter((x) => x.id !== timeoutJob))
    await api("PATCH", `/api/jobs/${j.id}`, { key: tenantKey, body: { status: "cancelled" } });
});

const nodesOf = async () =>
  (await api("GET", `/api/nodes?cluster_id=${clusterId}&limit=50`, { key: operatorKey })).body.data as Array<{
    id: string;
    hostname: string;
    status: string;
    pod: string | null;
    slurm: { state: string; reason: string | null } | null;
  }>;
const nodeNamed = async (name: string) => (await nodesOf()).find((n) => n.hostname === name)!;

async function submit(o: { command?: string; gpus?: number; duration?: number; retries?: number; name?: string; wrapper?: boolean }) {
  const r = await api("POST", "/api/jobs", {
    key: tenantKey,
    body: {
      name: o.name ?? unique("job"),
      gpu_count: o.gpus ?? 1,
      gpu_type: o.wrapper ? GPU_TYPE_W : GPU_TYPE,
      cluster_id: o.wrapper ? clusterW : clusterId,
      priority: 1,
      max_retries: o.retries ?? 0,
      image: "busybox:latest",
      command: o.command ?? "echo hello",
      ...(o.duration ? { duration_s: o.duration } : {}),
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.job.id as string;
}
const jobOf = async (id: string) => (await api("GET", `/api/jobs/${id}`, { key: operatorKey })).body.job;
const slurmOf = async (id: string) => (await api("GET", `/api/jobs/${id}/slurm`, { key: operatorKey })).body;
const logsOf = async (id: string, attempt = 1) =>
  ((await api("GET", `/api/jobs/${id}/logs?attempt=${attempt}&limit=500`, { key: tenantKey })).body.data as Array<{
    stream: string;
    text: string;
  }>) ?? [];
const waitFor = (id: string, status: string, ms = 60_000) =>
  eventually(
    async () => {
      const j = await jobOf(id);
      return j.status === status ? j : null;
    },
    ms,
    why,
  );
const squeue = async () =>
  (await slurm.tool("squeue", ["-h", "-a", "-t", "all", "-o", "%A|%T|%u|%N|%k"])).stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [id, state, user, nodes, ...comment] = l.split("|");
      return { id: id!, state: state!, user: user!, nodes: nodes!, comment: comment.join("|") };
    });
const scontrol = (...args: string[]) => slurm.tool("scontrol", args);

let timeoutJob: string;
let completedJob: string;

describe("a Slurm cluster joins GPUForge as it is", () => {
  it("mirrors Slurm's GPU nodes with their partitions, GRES and Slurm state, through the agent routes", async () => {
    const nodes = await eventually(
      async () => {
        const n = await nodesOf();
        return n.length === 4 && n.every((x) => x.status === "available" && x.slurm?.state === "IDLE") ? n : null;
      },
      60_000,
      why,
    );
    expect(nodes.map((n) => n.hostname).sort()).toEqual(NODES);
    expect(nodes.every((n) => n.pod === "gpu")).toBe(true);
    const gpus = await db().gpu.findMany({ where: { node: { clusterId } } });
    expect(gpus).toHaveLength(8);
    expect(new Set(gpus.map((g) => g.gpuType))).toEqual(new Set([GPU_TYPE]));
    const picture = await api("GET", `/api/clusters/${clusterId}/slurm`, { key: operatorKey });
    expect(picture.status).toBe(200);
    expect(picture.body.slurm).toMatchObject({ slurm_cluster_name: slurm.clusterName, slurm_version: "22.05.8", container_mode: "oci" });
    expect(picture.body.slurm.partitions.map((p: { name: string; gpus: number }) => [p.name, p.gpus])).toEqual([
      ["gpu", 8],
      ["short", 4],
    ]);
    // the agent key of the Slurm cluster sees its own picture, nobody else's
    expect((await api("GET", `/api/clusters/${clusterId}/slurm`, { key: agentKey })).status).toBe(200);
    // a job that will outlive its time limit: Slurm ends it TIMEOUT while the rest runs
    timeoutJob = await submit({ command: "echo started; sleep 600", duration: 20, name: "too-long" });
  });

  it("runs a placement as one sbatch job on exactly the chosen node, inside its image, and reports its end, output and times", async () => {
    const id = await submit({
      command: 'echo "hello from $(cat /etc/hostname) on GPUs $CUDA_VISIBLE_DEVICES"; echo to-stderr >&2; sleep 3',
      duration: 120,
    });
    const done = await waitFor(id, "completed");
    completedJob = id;
    expect(done.exit_code).toBe(0);
    expect(done.slurm_job_id).toMatch(/^\d+$/);
    const s = await slurmOf(id);
    expect(s.slurm_job_id).toBe(done.slurm_job_id);
    const attempt = s.data[0];
    expect(attempt.history.map((h: { state: string }) => h.state)).toEqual(expect.arrayContaining(["SUBMITTING", "RUNNING", "COMPLETED"]));
    expect(attempt.history.at(-1).state).toBe("COMPLETED");
    expect(attempt).toMatchObject({ state: "COMPLETED", exit_code: "0:0", partition: "gpu" });
    expect(attempt.account).toMatch(/^gf-tenant-/);
    // exactly the node GPUForge chose
    const placed = await db().jobPlacement.findFirstOrThrow({ where: { jobId: id } });
    const host = (await db().node.findUniqueOrThrow({ where: { id: placed.nodeIds[0]! } })).hostname;
    expect(attempt.nodes).toBe(host);
    const job = (await scontrol("-o", "show", "job", done.slurm_job_id)).stdout;
    expect(job).toContain(`ReqNodeList=${host}`);
    expect(job).toContain("Account=" + attempt.account);
    expect(job).toMatch(/TimeLimit=00:02:00/);
    // its output, from the container (busybox's /etc/hostname), both streams
    const logs = await eventually(async () => {
      const l = await logsOf(id);
      return l.some((c) => c.stream === "stderr") ? l : null;
    }, 20_000);
    expect(
      logs
        .filter((c) => c.stream === "stdout")
        .map((c) => c.text)
        .join(""),
    ).toMatch(/hello from gpuforge-test on GPUs \d/);
    expect(
      logs
        .filter((c) => c.stream === "stderr")
        .map((c) => c.text)
        .join(""),
    ).toContain("to-stderr");
    // usage from Slurm's own start and end
    const usage = await db().usageEvent.findMany({ where: { jobId: id } });
    expect(usage.map((u) => u.kind)).toEqual(["final"]);
    expect(usage[0]!.startedAt.toISOString()).toBe(new Date(attempt.started_at).toISOString());
    expect(usage[0]!.endedAt.toISOString()).toBe(new Date(attempt.ended_at).toISOString());
  });

  it("reports a failing job failed with its exit code", async () => {
    const id = await submit({ command: "echo about to fail; exit 3" });
    const failed = await waitFor(id, "failed");
    expect(failed.exit_code).toBe(3);
    expect(failed.error).toMatch(/Slurm: FAILED/);
    expect((await slurmOf(id)).data[0].state).toBe("FAILED");
  });

  it("cancels through scancel: a tenant's cancel ends the Slurm job", async () => {
    const id = await submit({ command: "echo waiting; sleep 600" });
    const running = await eventually(
      async () => {
        const s = await slurmOf(id);
        return s.data[0]?.state === "RUNNING" ? s.data[0] : null;
      },
      60_000,
      why,
    );
    expect((await api("PATCH", `/api/jobs/${id}`, { key: tenantKey, body: { status: "cancelled" } })).status).toBe(200);
    await eventually(async () => (await squeue()).find((j) => j.id === running.slurm_job_id && j.state === "CANCELLED"), 30_000, why);
    expect((await jobOf(id)).status).toBe("cancelled");
  });

  it("an uneven gang: a heterogeneous job of exactly 2 + 1 GPUs through a container wrapper; refused, saying why, by Slurm 22.05's --container", async () => {
    await eventually(
      async () => {
        const n = (await api("GET", `/api/nodes?cluster_id=${clusterW}`, { key: operatorKey })).body.data as Array<{ status: string }>;
        return n.length === 2 && n.every((x) => x.status === "available");
      },
      60_000,
      why,
    );
    const id = await submit({
      wrapper: true,
      gpus: 3,
      command: 'echo "part in $(cat /etc/hostname) with GPUs $CUDA_VISIBLE_DEVICES"; sleep 2',
    });
    const done = await waitFor(id, "completed", 90_000);
    const rows = (await slurmW.tool("scontrol", ["-o", "show", "job", done.slurm_job_id])).stdout.trim().split("\n");
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => /TresPerNode=\S+/.exec(r)?.[0] ?? "").sort((a, b) => a.localeCompare(b))).toEqual([
      "TresPerNode=gres:gpu:h100:1",
      "TresPerNode=gres:gpu:h100:2",
    ]);
    const text = (await logsOf(id)).map((c) => c.text).join("");
    // both components ran, inside the image (its /etc/hostname, not the host's)
    expect(text.match(/part in gpuforge-test/g)).toHaveLength(2);
    // the same gang on the cluster whose bridge uses Slurm 22.05's --container: not started, and why
    const refused = await submit({ gpus: 3, command: "echo never" });
    const failed = await waitFor(refused, "failed", 60_000);
    expect(failed.error).toMatch(/heterogeneous job, and Slurm 22\.05\.8 cannot start a --container step/);
  }, 200_000);

  it("a job past its time limit ends TIMEOUT in Slurm and fails here", async () => {
    const failed = await waitFor(timeoutJob, "failed", 150_000);
    expect(failed.error).toMatch(/TIMEOUT/);
    expect((await slurmOf(timeoutJob)).data[0].state).toBe("TIMEOUT");
    expect((await logsOf(timeoutJob)).map((c) => c.text).join("")).toContain("started");
  }, 200_000);

  it("shows jobs submitted to Slurm directly as foreign load, and never places on those GPUs", async () => {
    // fill three nodes with GPUForge work, then take the fourth's GPUs with a job of Slurm's own
    const direct = await slurm.tool("sbatch", [
      "--parsable",
      "-w",
      "sn4",
      "--gres=gpu:2",
      `--output=${slurm.outputDir}/direct-%j.out`,
      "--wrap=sleep 600",
    ]);
    const foreignId = direct.stdout.trim();
    expect(foreignId).toMatch(/^\d+$/);
    const sn4 = await nodeNamed("sn4");
    await eventually(
      async () => (await db().gpu.count({ where: { nodeId: sn4.id, foreignHolder: { startsWith: `Slurm job ${foreignId}` } } })) === 2,
      30_000,
      why,
    );
    const busy = [];
    for (let i = 0; i < 3; i++) busy.push(await submit({ gpus: 2, command: "sleep 600" }));
    await Promise.all(busy.map((id) => waitFor(id, "running", 60_000)));
    const waiting = await submit({ gpus: 2, command: "echo got the foreign GPUs" });
    await new Promise((r) => setTimeout(r, 4000));
    const j = await jobOf(waiting);
    expect(j.status).toBe("queued");
    expect(await db().gpu.count({ where: { nodeId: sn4.id, allocatedJobId: { not: null } } })).toBe(0);
    // the foreign job ends: its GPUs are free again, and GPUForge's waiting job gets them
    await slurm.tool("scancel", [foreignId]);
    await waitFor(waiting, "completed", 60_000);
    expect((await db().jobPlacement.findFirstOrThrow({ where: { jobId: waiting } })).nodeIds).toEqual([sn4.id]);
    for (const id of busy)
      expect((await api("PATCH", `/api/jobs/${id}`, { key: tenantKey, body: { status: "cancelled" } })).status).toBe(200);
  });

  it("drains the Slurm node for a GPUForge quarantine with our prefix, and resumes it when GPUForge returns it", async () => {
    const sn3 = await nodeNamed("sn3");
    const q = await api("PATCH", `/api/nodes/${sn3.id}`, { key: operatorKey, body: { status: "quarantined", reason: "XID 79 on GPU 1" } });
    expect(q.status).toBe(200);
    await eventually(
      async () => /Reason=gpuforge: quarantined - XID 79 on GPU 1/.test((await scontrol("-o", "show", "node", "sn3")).stdout),
      30_000,
      why,
    );
    expect((await scontrol("-o", "show", "node", "sn3")).stdout).toMatch(/State=\S*DRAIN/);
    expect((await nodeNamed("sn3")).status).toBe("quarantined");
    expect((await api("PATCH", `/api/nodes/${sn3.id}`, { key: operatorKey, body: { status: "available" } })).status).toBe(200);
    await eventually(async () => /State=IDLE /.test((await scontrol("-o", "show", "node", "sn3")).stdout), 30_000, why);
  });

  it("respects a drain made by Slurm's admins: drained here with their reason, returned when they resume it, never undone by us", async () => {
    await scontrol("update", "nodename=sn2", "state=drain", "reason=admin: replacing a fan");
    const drained = await eventually(
      async () => {
        const n = await nodeNamed("sn2");
        return n.status === "draining" ? n : null;
      },
      30_000,
      why,
    );
    expect(drained.slurm).toMatchObject({ state: expect.stringMatching(/\+DRAIN/), reason: "admin: replacing a fan" });
    // an operator returning it in GPUForge does not lift Slurm's drain, and the mirror drains it again
    await api("PATCH", `/api/nodes/${drained.id}`, { key: operatorKey, body: { status: "available" } });
    // the mirror drains it here again at its next pass; meanwhile, and after, Slurm's drain stands
    await eventually(async () => (await nodeNamed("sn2")).status === "draining", 30_000, why);
    await new Promise((r) => setTimeout(r, 3000));
    expect((await scontrol("-o", "show", "node", "sn2")).stdout).toMatch(/Reason=admin: replacing a fan/);
    expect((await nodeNamed("sn2")).status).toBe("draining");
    await scontrol("update", "nodename=sn2", "state=resume");
    await eventually(async () => (await nodeNamed("sn2")).status === "available", 30_000, why);
  });

  it("a slurmd killed mid-job: Slurm fails the node's job, GPUForge places it again per its retries", async () => {
    const id = await submit({ command: "echo attempt $GPUFORGE_ATTEMPT; sleep 20", retries: 1 });
    const first = await eventually(
      async () => {
        const s = await slurmOf(id);
        return s.data[0]?.state === "RUNNING" ? s.data[0] : null;
      },
      60_000,
      why,
    );
    const host = first.nodes as string;
    slurm.killSlurmd(host);
    // Slurm takes the node down: GPUForge's node goes offline at once, its job NODE_FAILs
    await eventually(async () => (await nodeNamed(host)).status === "offline", 60_000, why);
    const done = await waitFor(id, "completed", 120_000);
    expect(done.attempts).toBe(2);
    const s = await slurmOf(id);
    expect(s.data.map((a: { attempt: number; state: string }) => [a.attempt, a.state])).toEqual([
      [2, "COMPLETED"],
      [1, "NODE_FAIL"],
    ]);
    expect(s.data[0].nodes).not.toBe(host);
    const events = await db().jobEvent.findMany({ where: { jobId: id }, orderBy: { id: "asc" } });
    expect(events.some((e) => /NODE_FAIL/.test(e.reason) || /retry 1 of 1/.test(e.reason))).toBe(true);
    await slurm.startSlurmd(host);
    await eventually(async () => (await nodeNamed(host)).status === "available", 60_000, why);
  }, 200_000);

  it("a bridge restarted mid-job starts nothing twice and loses no report; an end it missed is billed at Slurm's end", async () => {
    const id = await submit({ command: "echo before; sleep 6; echo after", duration: 300 });
    const across = await submit({ command: "echo one; sleep 25; echo two", duration: 300 });
    const running = await eventually(
      async () => {
        const s = await slurmOf(id);
        return s.data[0]?.state === "RUNNING" ? s.data[0] : null;
      },
      60_000,
      why,
    );
    await eventually(async () => (await slurmOf(across)).data[0]?.state === "RUNNING", 60_000, why);
    await bridge.kill();
    // the job ends in Slurm while no bridge watches
    await eventually(async () => (await squeue()).find((j) => j.id === running.slurm_job_id && j.state === "COMPLETED"), 30_000);
    await new Promise((r) => setTimeout(r, 3000));
    expect((await jobOf(id)).status).toBe("running");
    launch();
    const done = await waitFor(id, "completed", 60_000);
    expect(done.attempts).toBe(1);
    const ours = (await squeue()).filter((j) => j.comment.includes(id));
    expect(ours).toHaveLength(1);
    // the one that ran on across the restart is followed to its end by the new bridge, never started again
    const acrossDone = await waitFor(across, "completed", 90_000);
    expect(acrossDone.attempts).toBe(1);
    expect((await squeue()).filter((j) => j.comment.includes(across))).toHaveLength(1);
    expect((await logsOf(across)).map((c) => c.text).join("")).toMatch(/one[\s\S]*two/);
    const text = (await logsOf(id)).map((c) => c.text).join("");
    expect(text).toContain("before");
    expect(text).toContain("after");
    const detail = parseJobDetail((await scontrol("-o", "show", "job", running.slurm_job_id)).stdout)!;
    const usage = await db().usageEvent.findFirstOrThrow({ where: { jobId: id, kind: "final" } });
    // billed to Slurm's EndTime (whole seconds), not to when the restarted bridge reported it
    expect(Math.abs(usage.endedAt.getTime() - detail.endedAt!.getTime())).toBeLessThan(1000);
    expect(Date.now() - usage.endedAt.getTime()).toBeGreaterThan(3000);
  }, 200_000);

  it("shows operators the Slurm cluster, its partitions, each node's Slurm state and reason beside ours, and a job's Slurm id and states; tenants their job's", async () => {
    await scontrol("update", "nodename=sn4", "state=drain", "reason=admin: reseating a riser");
    const sn4 = await eventually(
      async () => {
        const n = await nodeNamed("sn4");
        return n.status === "draining" ? n : null;
      },
      30_000,
      why,
    );
    const slurmJobId = (await jobOf(completedJob)).slurm_job_id as string;
    const operator = await makeUser("operator");
    const member = await makeUser("tenant_member", tenantId);
    const browser = await launchBrowser();
    try {
      // the fleet floor: the Slurm cluster with its partitions, reached by keyboard
      const page = await openPage(browser, "/admin", operator);
      const floor = page.getByRole("region", { name: "Slurm clusters" });
      await floor
        .getByRole("list", { name: /^Partitions of / })
        .first()
        .waitFor();
      const clusterName = (await db().cluster.findUniqueOrThrow({ where: { id: clusterId } })).name;
      const ours = page.getByRole("list", { name: `Partitions of ${clusterName}` });
      await ours.getByText("gpu", { exact: true }).waitFor();
      await ours.getByText("short", { exact: true }).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await shot(page, "slurm-floor");
      const link = floor.getByRole("link", { name: clusterName });
      await link.focus();
      await page.keyboard.press("Enter");
      await page.waitForURL(`**/admin/clusters/${clusterId}`);
      // the cluster page: its bridge, partitions, and each node's Slurm state and reason beside ours
      const nodes = page.getByRole("table", { name: "Slurm nodes" });
      const row = nodes.getByRole("row").filter({ hasText: "sn4" });
      await row.getByText("draining").first().waitFor();
      await row.getByText("admin: reseating a riser").first().waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await shot(page, "slurm-cluster");
      // the node page: Slurm's state and reason beside ours
      await page.goto(`${baseUrl()}/admin/nodes/${sn4.id}`);
      await page.getByTestId("slurm-state").filter({ hasText: "DRAIN" }).waitFor();
      await page.getByTestId("slurm-reason").filter({ hasText: "admin: reseating a riser" }).waitFor();
      await page.getByText("Drained by Slurm's admins").first().waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await shot(page, "slurm-node");
      // the job page: the Slurm job id and the states Slurm reported
      await page.goto(`${baseUrl()}/admin/jobs/${completedJob}`);
      expect((await page.getByTestId("slurm-job-id").first().textContent())?.trim()).toBe(slurmJobId);
      const states = page.getByRole("table", { name: "Slurm states of attempt 1" });
      await states.getByText("RUNNING").first().waitFor();
      await states.getByText("COMPLETED").first().waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await shot(page, "slurm-job-operator");
      // the tenant sees its own job's Slurm id and history
      const tenantPage = await openPage(browser, `/dashboard/jobs/${completedJob}`, member);
      expect((await tenantPage.getByTestId("slurm-job-id").first().textContent())?.trim()).toBe(slurmJobId);
      expect(await axeViolations(tenantPage)).toEqual([]);
      await shot(tenantPage, "slurm-job-tenant");
      // the operators' docs page
      const docs = await openPage(browser, "/docs/slurm");
      await docs.getByRole("heading", { level: 1 }).filter({ hasText: "Slurm" }).waitFor();
      expect(await axeViolations(docs)).toEqual([]);
      await shot(docs, "slurm-docs");
    } finally {
      await browser.close();
      await scontrol("update", "nodename=sn4", "state=resume");
    }
  }, 120_000);
});
