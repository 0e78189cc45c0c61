import { describe, expect, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { db, pool } from "@/lib/db/client";
import { accrueRunningUsage } from "@/lib/billing/meter";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { createCluster } from "@/lib/fleet/create-cluster";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { finishJob } from "@/lib/jobs/finish-job";
import { getJobOrThrow } from "@/lib/jobs/queries";
import { jobJson } from "@/lib/jobs/schemas";
import { submitJob } from "@/lib/jobs/submit-job";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { GPUFORGE_DRAIN_PREFIX } from "@/lib/slurm/node-state";
import { jobSlurm } from "@/lib/slurm/queries";
import { reportSlurmCluster } from "@/lib/slurm/report-cluster";
import { reportSlurmJob } from "@/lib/slurm/report-job";
import type { SlurmNodeReport } from "@/lib/slurm/schemas";
import { createTenant } from "@/lib/tenants/create-tenant";
import {
  actorFor,
  agentPrincipal,
  asTenantAdmin,
  inventory,
  makeCluster,
  makeTenant,
  operatorPrincipal,
  placementOf,
  unique,
} from "../support/fixtures";
import { codeAndFieldOf, codeOf } from "../support/outcomes";

// The control plane's side of the Slurm bridge, against the real database: Slurm nodes mirrored
// through the agent routes' services, their lifecycle following Slurm, GPUs foreign jobs hold kept
// from the scheduler, the bridge's fenced reports on Slurm jobs, and the run billed by Slurm's times.

const idle = (o: Partial<SlurmNodeReport> = {}): SlurmNodeReport => ({
  state: "IDLE",
  partitions: ["gpu"],
  cpus: 64,
  gres: "gpu:h100:4",
  ...o,
});

async function slurmFleet(nodes = 1, gpus = 4) {
  const cluster = await createCluster(systemActor, { name: unique("slurm"), region: null, provider: null, kind: "slurm" });
  const gpuType = unique("S").replace(/-/g, "").slice(0, 12).toUpperCase();
  const bridge = actorFor(agentPrincipal(cluster.id));
  const out = [];
  for (let i = 0; i < nodes; i++) {
    const r = await registerNode(bridge, {
      hostname: unique("sn"),
      capabilities: { containers: true, runtime: "slurm oci" },
      gpus: inventory(gpus, gpuType),
      slurm: idle({ gres: `gpu:h100:${gpus}` }),
    });
    await recordHeartbeat(bridge, r.node.id, { slurm: idle() });
    out.push(r);
  }
  return { cluster, gpuType, bridge, nodes: out };
}

const nodeRow = (id: string) => db().node.findUniqueOrThrow({ where: { id }, select: { status: true, statusBeforeOffline: true } });
const holders = async (nodeId: string) =>
  (await db().gpu.findMany({ where: { nodeId }, orderBy: { index: "asc" }, select: { foreignHolder: true } })).map((g) => g.foreignHolder);

describe("Slurm clusters and their nodes", () => {
  it("a Slurm cluster's nodes are registered with their Slurm state, and only there", async () => {
    const f = await slurmFleet();
    const node = await db().node.findUniqueOrThrow({ where: { id: f.nodes[0]!.node.id }, include: { slurm: true } });
    expect(node.status).toBe("available");
    expect(node.slurm).toMatchObject({ state: "IDLE", partitions: ["gpu"], cpus: 64, gres: "gpu:h100:4" });
    // without its Slurm state on a Slurm cluster, and with one on a GPU cluster: refused, naming the field
    expect(await codeAndFieldOf(registerNode(f.bridge, { hostname: unique("x"), gpus: inventory(1) }))).toBe("validation_failed:slurm");
    expect(await codeAndFieldOf(recordHeartbeat(f.bridge, f.nodes[0]!.node.id, {}))).toBe("validation_failed:slurm");
    const gpuCluster = await makeCluster();
    const agent = actorFor(agentPrincipal(gpuCluster.id));
    expect(await codeAndFieldOf(registerNode(agent, { hostname: unique("x"), gpus: inventory(1), slurm: idle() }))).toBe(
      "validation_failed:slurm",
    );
    expect(await db().node.count({ where: { clusterId: gpuCluster.id } })).toBe(0);
  });

  it("follows Slurm: an admins' drain drains, their resume returns, down is offline at once and back where it was", async () => {
    const f = await slurmFleet();
    const id = f.nodes[0]!.node.id;
    const beat = (r: SlurmNodeReport) => recordHeartbeat(f.bridge, id, { slurm: r });
    let reply = await beat(idle({ state: "MIXED+DRAIN", reason: "bad fan", reason_by: "root" }));
    expect((await nodeRow(id)).status).toBe("draining");
    // a drain Slurm's admins made asks nothing of Slurm
    expect(reply.slurm).toEqual({ drain: null, reason: null });
    const event = await db().nodeEvent.findFirstOrThrow({ where: { nodeId: id, toStatus: "draining" }, orderBy: { id: "desc" } });
    expect(event).toMatchObject({ actor: "slurm", reason: "Slurm: MIXED+DRAIN (bad fan)" });
    await beat(idle({ state: "DOWN+DRAIN+NOT_RESPONDING", reason: "Not responding" }));
    expect(await nodeRow(id)).toEqual({ status: "offline", statusBeforeOffline: "draining" });
    reply = await beat(idle({ state: "IDLE" }));
    expect((await nodeRow(id)).status).toBe("available");
    expect(reply.slurm).toEqual({ drain: false, reason: null });
    // a state this code does not know changes nothing
    await beat(idle({ state: "QUANTUM" }));
    expect((await nodeRow(id)).status).toBe("available");
  });

  it("a GPUForge quarantine drains the node in Slurm with our prefix; the return lifts our drain, never Slurm's admins'", async () => {
    const f = await slurmFleet();
    const id = f.nodes[0]!.node.id;
    await changeNodeStatus(actorFor(operatorPrincipal), id, "quarantined", "XID 79 on GPU 2");
    let reply = await recordHeartbeat(f.bridge, id, { slurm: idle() });
    expect(reply.slurm).toEqual({ drain: true, reason: `${GPUFORGE_DRAIN_PREFIX} quarantined - XID 79 on GPU 2` });
    // Slurm now shows our drain: that is not an admins' drain, nothing flips
    reply = await recordHeartbeat(f.bridge, id, { slurm: idle({ state: "IDLE+DRAIN", reason: reply.slurm!.reason }) });
    expect((await nodeRow(id)).status).toBe("quarantined");
    await changeNodeStatus(actorFor(operatorPrincipal), id, "available");
    reply = await recordHeartbeat(f.bridge, id, { slurm: idle({ state: "IDLE+DRAIN", reason: `${GPUFORGE_DRAIN_PREFIX} quarantined` }) });
    expect(reply.slurm?.drain).toBe(false);
    expect((await nodeRow(id)).status).toBe("available");
    // an operator's return of a node Slurm's admins drained: the next report drains it again
    await recordHeartbeat(f.bridge, id, { slurm: idle({ state: "IDLE+DRAIN", reason: "firmware" }) });
    expect((await nodeRow(id)).status).toBe("draining");
    await changeNodeStatus(actorFor(operatorPrincipal), id, "available");
    await recordHeartbeat(f.bridge, id, { slurm: idle({ state: "IDLE+DRAIN", reason: "firmware" }) });
    expect((await nodeRow(id)).status).toBe("draining");
  });

  it("GPUs jobs outside GPUForge hold are never placed on, and free again when those jobs end", async () => {
    const f = await slurmFleet(1, 4);
    const id = f.nodes[0]!.node.id;
    const t = await makeTenant(16);
    await recordHeartbeat(f.bridge, id, {
      slurm: idle({ state: "MIXED", foreign: [{ slurm_job_id: "4711", user: "alice", gpus: 2, indices: [0, 1] }] }),
    });
    expect(await holders(id)).toEqual(["Slurm job 4711 (alice)", "Slurm job 4711 (alice)", null, null]);
    const small = await submitJob(asTenantAdmin(t.id), { name: "small", gpu_count: 2, gpu_type: f.gpuType, priority: 1, max_retries: 0 });
    await runSchedulerCycle("test");
    const big = await submitJob(asTenantAdmin(t.id), { name: "big", gpu_count: 3, gpu_type: f.gpuType, priority: 1, max_retries: 0 });
    await runSchedulerCycle("test");
    expect((await getJobOrThrow(operatorPrincipal, big.id)).status).toBe("queued");
    const placed = await getJobOrThrow(operatorPrincipal, small.id);
    expect(placed.status).toBe("running");
    const held = await db().gpu.findMany({ where: { nodeId: id, allocatedJobId: small.id }, select: { index: true } });
    expect(held.map((g) => g.index).sort((x, y) => x - y)).toEqual([2, 3]);
    // Slurm now reports the foreign job on indices GPUForge's job holds: the mark goes to free GPUs only
    await recordHeartbeat(f.bridge, id, {
      slurm: idle({ state: "MIXED", foreign: [{ slurm_job_id: "4711", user: "alice", gpus: 3, indices: [2, 3, 0] }] }),
    });
    expect(await holders(id)).toEqual(["Slurm job 4711 (alice)", "Slurm job 4711 (alice)", null, null]);
    const sn = await db().slurmNode.findUniqueOrThrow({ where: { nodeId: id } });
    expect({ gpus: sn.foreignGpus, unplaced: sn.foreignUnplaced }).toEqual({ gpus: 3, unplaced: 1 });
    // the foreign job ends, GPUForge's too: the big job fits now
    await recordHeartbeat(f.bridge, id, { slurm: idle({ state: "MIXED", foreign: [] }) });
    expect(await holders(id)).toEqual([null, null, null, null]);
    await finishJob(actorFor(operatorPrincipal), small.id, { status: "completed", exit_code: 0 });
    await runSchedulerCycle("test");
    expect((await getJobOrThrow(operatorPrincipal, big.id)).status).toBe("running");
  });

  it("a node without CPUs left takes no more work, and the database refuses a GPU both held and allocated", async () => {
    const f = await slurmFleet(1, 2);
    const id = f.nodes[0]!.node.id;
    await recordHeartbeat(f.bridge, id, { slurm: idle({ state: "ALLOCATED", cpus: 64, cpus_alloc: 64 }) });
    expect((await holders(id)).every((h) => h !== null)).toBe(true);
    const t = await makeTenant(4);
    const job = await submitJob(asTenantAdmin(t.id), { name: "wait", gpu_count: 1, gpu_type: f.gpuType, priority: 1, max_retries: 0 });
    await runSchedulerCycle("test");
    expect((await getJobOrThrow(operatorPrincipal, job.id)).status).toBe("queued");
    const gpu = await db().gpu.findFirstOrThrow({ where: { nodeId: id } });
    await expect(db().gpu.update({ where: { id: gpu.id }, data: { allocatedJobId: job.id } })).rejects.toThrow(/foreign_holder/);
    await recordHeartbeat(f.bridge, id, { slurm: idle({ state: "IDLE", cpus_alloc: 0 }) });
    expect(await holders(id)).toEqual([null, null]);
  });

  it("heartbeats marking foreign load while scheduling cycles place work never double-book a GPU", async () => {
    const f = await slurmFleet(2, 4);
    const t = await makeTenant(64);
    for (let i = 0; i < 6; i++)
      await submitJob(asTenantAdmin(t.id), { name: `p${i}`, gpu_count: 1, gpu_type: f.gpuType, priority: 1, max_retries: 0 });
    const beats = f.nodes.flatMap((n, k) =>
      Array.from({ length: 4 }, (_, i) =>
        recordHeartbeat(f.bridge, n.node.id, {
          slurm: idle({ state: "MIXED", foreign: [{ slurm_job_id: String(100 + k), user: "bob", gpus: (i % 3) + 1, indices: [0, 1, 2] }] }),
        }),
      ),
    );
    const cycles = Array.from({ length: 4 }, () => runSchedulerCycle("race"));
    const results = await Promise.allSettled([...beats, ...cycles]);
    expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    const both = await pool().query(
      `SELECT count(*)::int AS n FROM gpus WHERE node_id = ANY($1::uuid[]) AND foreign_holder IS NOT NULL AND allocated_job_id IS NOT NULL`,
      [f.nodes.map((n) => n.node.id)],
    );
    expect(both.rows[0].n).toBe(0);
  });
});

describe("the bridge's reports on Slurm jobs", () => {
  async function placedOnSlurm(o: { gpus?: number; duration?: number } = {}) {
    const f = await slurmFleet(1, 4);
    const t = await createTenant(systemActor, { name: unique("Acme Research"), gpu_quota: 8, billing_email: null });
    const job = await submitJob(asTenantAdmin(t.id), {
      name: "train",
      gpu_count: o.gpus ?? 2,
      gpu_type: f.gpuType,
      priority: 1,
      max_retries: 1,
      image: "nvcr.io/nvidia/pytorch:24.05-py3",
      command: "python train.py",
      duration_s: o.duration ?? 3600,
    });
    await runSchedulerCycle("test");
    expect((await getJobOrThrow(operatorPrincipal, job.id)).status).toBe("running");
    return { ...f, tenant: t, job, placement: await placementOf(job.id) };
  }

  it("tracks every placement on a Slurm cluster from its first moment, and answers what to submit", async () => {
    const w = await placedOnSlurm();
    const sj = await db().slurmJob.findUniqueOrThrow({ where: { jobId_attempt: { jobId: w.job.id, attempt: w.placement.attempt } } });
    expect(sj).toMatchObject({ clusterId: w.cluster.id, state: "PLACED", slurmJobId: null });
    const r = await reportSlurmJob(w.bridge, w.job.id, { ...w.placement, state: "SUBMITTING" });
    expect(r.submission).toMatchObject({
      tenant_id: w.tenant.id,
      gpu_type: w.gpuType,
      gpu_count: 2,
      duration_s: 3600,
      nodes: [{ node_id: w.nodes[0]!.node.id, hostname: w.nodes[0]!.node.hostname }],
    });
    expect(r.submission.nodes[0]!.gpu_ids).toHaveLength(2);
    expect(r.submission.account).toMatch(/^gf-acme-research-/);
    // the same account every time
    const again = await reportSlurmJob(w.bridge, w.job.id, { ...w.placement, state: "PENDING", slurm_job_id: "812", reason: "Resources" });
    expect(again.submission.account).toBe(r.submission.account);
    expect(again.slurm).toMatchObject({ slurm_job_id: "812", state: "PENDING", reason: "Resources" });
    expect(jobJson(await getJobOrThrow(operatorPrincipal, w.job.id)).slurm_job_id).toBe("812");
  });

  it("is fenced: another placement's report, another Slurm job's, or another cluster's bridge changes nothing", async () => {
    const w = await placedOnSlurm();
    await reportSlurmJob(w.bridge, w.job.id, { ...w.placement, state: "PENDING", slurm_job_id: "900" });
    expect(await codeOf(reportSlurmJob(w.bridge, w.job.id, { ...w.placement, attempt: w.placement.attempt + 1, state: "RUNNING" }))).toBe(
      "stale_report",
    );
    expect(
      await codeOf(
        reportSlurmJob(w.bridge, w.job.id, { ...w.placement, fence: "5b0f2f8e-4a8e-4f65-9a52-0d1f3c2b7e11", state: "COMPLETED" }),
      ),
    ).toBe("stale_report");
    expect(await codeAndFieldOf(reportSlurmJob(w.bridge, w.job.id, { ...w.placement, state: "RUNNING", slurm_job_id: "901" }))).toBe(
      "conflict:slurm_job_id",
    );
    const other = await slurmFleet();
    expect(await codeOf(reportSlurmJob(other.bridge, w.job.id, { ...w.placement, state: "COMPLETED" }))).toBe("not_found");
    expect(await codeOf(reportSlurmJob(asTenantAdmin(w.tenant.id), w.job.id, { ...w.placement, state: "RUNNING" }))).toBe("forbidden");
    const sj = await db().slurmJob.findUniqueOrThrow({ where: { jobId_attempt: { jobId: w.job.id, attempt: w.placement.attempt } } });
    expect(sj).toMatchObject({ slurmJobId: "900", state: "PENDING" });
  });

  it("bills the run from Slurm's start to Slurm's end, and nothing while Slurm has not started it", async () => {
    const w = await placedOnSlurm({ gpus: 2 });
    const placedAt = (await db().job.findUniqueOrThrow({ where: { id: w.job.id } })).startedAt!;
    // pending in Slurm: the meter passes it by
    await reportSlurmJob(w.bridge, w.job.id, { ...w.placement, state: "PENDING", slurm_job_id: "77" });
    await accrueRunningUsage({ prepaidEveryS: 0, invoiceEveryS: 0, tenantId: w.tenant.id, until: new Date(Date.now() + 60_000) });
    expect(await db().usageEvent.count({ where: { jobId: w.job.id } })).toBe(0);
    // Slurm started it half a second after GPUForge placed it
    const start = new Date(placedAt.getTime() + 500);
    await new Promise((r) => setTimeout(r, 1000));
    await reportSlurmJob(w.bridge, w.job.id, { ...w.placement, state: "RUNNING", started_at: start.toISOString() });
    const running = await db().job.findUniqueOrThrow({ where: { id: w.job.id }, include: { placements: true } });
    expect(running.startedAt!.getTime()).toBe(start.getTime());
    expect(running.placements[0]!.startedAt.getTime()).toBe(start.getTime());
    // a start Slurm's clock puts before the placement is the placement's
    await reportSlurmJob(w.bridge, w.job.id, { ...w.placement, state: "RUNNING", started_at: new Date(0).toISOString() });
    expect((await db().job.findUniqueOrThrow({ where: { id: w.job.id } })).startedAt!.getTime()).toBe(start.getTime());
    // it ended in Slurm three seconds after it started; the bridge's report comes later
    const end = new Date(running.startedAt!.getTime() + 3000);
    await new Promise((r) => setTimeout(r, 3500));
    await reportSlurmJob(w.bridge, w.job.id, {
      ...w.placement,
      state: "COMPLETED",
      exit_code: "0:0",
      started_at: start.toISOString(),
      ended_at: end.toISOString(),
    });
    await finishJob(w.bridge, w.job.id, { status: "completed", exit_code: 0, ...w.placement });
    const usage = await db().usageEvent.findMany({ where: { jobId: w.job.id }, orderBy: { startedAt: "asc" } });
    expect(usage.map((u) => u.kind)).toEqual(["final"]);
    expect(usage[0]!.startedAt.getTime()).toBe(running.startedAt!.getTime());
    expect(usage[0]!.endedAt.getTime()).toBe(end.getTime());
    expect(Number(usage[0]!.gpuSeconds)).toBe(6);
    const history = await jobSlurm(operatorPrincipal, w.job.id);
    expect(history.data[0]!.history.map((h) => h.state)).toEqual(["PENDING", "RUNNING", "COMPLETED"]);
    const closed = await db().jobPlacement.findFirstOrThrow({ where: { jobId: w.job.id } });
    expect(closed.endedAt!.getTime()).toBe(end.getTime());
  });

  it("a run Slurm never started costs nothing", async () => {
    const w = await placedOnSlurm();
    await reportSlurmJob(w.bridge, w.job.id, { ...w.placement, state: "PENDING", slurm_job_id: "78" });
    await finishJob(w.bridge, w.job.id, { status: "interrupted", exit_code: -1, error: "never started", ...w.placement });
    const usage = await db().usageEvent.findMany({ where: { jobId: w.job.id } });
    expect(usage.map((u) => Number(u.gpuSeconds))).toEqual([0]);
  });
});

describe("the bridge's cluster report", () => {
  const picture = (bridge: string) => ({
    bridge_id: bridge,
    bridge_host: "login1",
    slurm_cluster_name: "hpc",
    slurm_version: "22.05.8",
    container_mode: "oci" as const,
    partitions: [{ name: "gpu", state: "UP", default: true, nodes: "n[1-2]", node_count: 2, max_time_s: null, gpus: 8, cpus: 128 }],
  });

  it("records the partitions, and lets one bridge run the cluster at a time", async () => {
    const f = await slurmFleet();
    const first = "11111111-1111-4111-8111-111111111111";
    const r = await reportSlurmCluster(f.bridge, f.cluster.id, picture(first));
    expect(r).toMatchObject({ slurm_cluster_name: "hpc", partitions: [{ name: "gpu", nodes: "n[1-2]" }], bridge: { id: first } });
    expect(await db().auditLog.count({ where: { action: "slurm.bridge_attached", targetId: f.cluster.id } })).toBe(1);
    await reportSlurmCluster(f.bridge, f.cluster.id, picture(first));
    expect(await codeAndFieldOf(reportSlurmCluster(f.bridge, f.cluster.id, picture("22222222-2222-4222-8222-222222222222")))).toBe(
      "conflict:bridge_id",
    );
    // once the first has been silent past the lease, the second takes over
    await db().slurmCluster.update({ where: { clusterId: f.cluster.id }, data: { reportedAt: new Date(Date.now() - 3_600_000) } });
    const took = await reportSlurmCluster(f.bridge, f.cluster.id, picture("22222222-2222-4222-8222-222222222222"));
    expect(took?.bridge.id).toBe("22222222-2222-4222-8222-222222222222");
    expect(await db().auditLog.count({ where: { action: "slurm.bridge_took_over", targetId: f.cluster.id } })).toBe(1);
  });

  it("refuses another cluster's bridge, a node-bound key, and a cluster of node agents", async () => {
    const f = await slurmFleet();
    const other = await slurmFleet();
    const bridge = "33333333-3333-4333-8333-333333333333";
    expect(await codeOf(reportSlurmCluster(other.bridge, f.cluster.id, picture(bridge)))).toBe("not_found");
    expect(
      await codeOf(reportSlurmCluster(actorFor(agentPrincipal(f.cluster.id, f.nodes[0]!.node.id)), f.cluster.id, picture(bridge))),
    ).toBe("forbidden");
    const gpu = await makeCluster();
    expect(await codeOf(reportSlurmCluster(actorFor(agentPrincipal(gpu.id)), gpu.id, picture(bridge)))).toBe("conflict");
    expect(await db().slurmCluster.count({ where: { clusterId: { in: [f.cluster.id, gpu.id] } } })).toBe(0);
  });
});
