import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { authenticateApiKey } from "@/lib/api-keys/authenticate-api-key";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { systemActor } from "@/lib/auth/principal";
import { db, pool } from "@/lib/db/client";
import { authenticateReplicaToken } from "@/lib/endpoints/authenticate-replica-token";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { ingestEndpointMetrics } from "@/lib/endpoints/endpoint-metrics";
import { reconcileEndpoints } from "@/lib/endpoints/reconcile-endpoints";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { finishJob } from "@/lib/jobs/finish-job";
import { getNodeOrThrow } from "@/lib/fleet/queries";
import { getJobOrThrow } from "@/lib/jobs/queries";
import { submitJob } from "@/lib/jobs/submit-job";
import { foldGpuRollups } from "@/lib/metrics/fold-rollups";
import { ingestGpuMetrics } from "@/lib/metrics/ingest-gpu-metrics";
import { jobGpuTelemetry } from "@/lib/metrics/held-gpu-telemetry";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { appendJobLogs, appendReplicaLogs, truncationMarker } from "@/lib/workload-logs/append-logs";
import { readJobLogs, readReplicaLogs } from "@/lib/workload-logs/queries";
import { env } from "@/lib/env";
import {
  actorFor,
  agentPrincipal,
  availableFleet,
  inventory,
  makeCluster,
  makeTenant,
  operatorPrincipal,
  placementOf,
  sweepUntilOffline,
  tenantAdminPrincipal,
  unique,
} from "../support/fixtures";
import { codeOf } from "../support/outcomes";

const operator = actorFor(operatorPrincipal);
const IMAGE = "nvcr.io/nvidia/pytorch:24.05-py3";

/** A job placed on one node of a fresh two-node cluster: the node it runs on, and the other. */
async function placedJob(o: { gpus?: number; retries?: number } = {}) {
  const { cluster, gpuType, nodes } = await availableFleet(2);
  const t = await makeTenant(64);
  const asT = actorFor(tenantAdminPrincipal(t.id));
  const job = await submitJob(asT, {
    name: "train",
    gpu_count: o.gpus ?? 8,
    gpu_type: gpuType,
    priority: 1,
    max_retries: o.retries ?? 0,
    image: IMAGE,
    command: "python train.py",
  });
  await runSchedulerCycle("test");
  const placed = await getJobOrThrow(operatorPrincipal, job.id);
  expect(placed.status).toBe("running");
  const nodeA = placed.gpus[0]!.nodeId;
  const nodeB = nodes.map((n) => n.node.id).find((id) => id !== nodeA)!;
  const agentKey = agentPrincipal(cluster.id);
  return { cluster, gpuType, tenant: t, asT, job, nodeA, nodeB, agentKey, agent: actorFor(agentKey) };
}

/** Node A is cut off: silent past the offline threshold, the sweep requeues its work, and the scheduler places it on B. */
async function cutOffAndReplace(jobId: string, nodeA: string) {
  await db().$executeRaw`UPDATE nodes SET last_heartbeat_at = now() - interval '1 hour' WHERE id = ${nodeA}::uuid`;
  await sweepUntilOffline(nodeA); // this sweep, or another test file's
  await runSchedulerCycle("test");
  const moved = await getJobOrThrow(operatorPrincipal, jobId);
  expect(moved.status).toBe("running");
  expect(moved.gpus.every((g) => g.nodeId !== nodeA)).toBe(true);
  return moved;
}

const inventoryOf = (n: { gpus: Array<{ uuid: string; index: number; gpuType: string; memoryTotalMb: number }> }) =>
  n.gpus.map((g) => ({ uuid: g.uuid, index: g.index, gpu_type: g.gpuType, memory_total_mb: g.memoryTotalMb }));
const chunks = (from: number, n: number, text = (i: number) => `line ${i}\n`) =>
  Array.from({ length: n }, (_, i) => ({ seq: from + i, stream: "stdout" as const, text: text(from + i) }));

describe("fencing: reports about a placement that is no longer current change nothing", () => {
  it("a node cut off while the job moved elsewhere: its late exit and log chunks answer 409, and the job keeps running on the new node", async () => {
    const { job, nodeA, nodeB, agent, agentKey } = await placedJob();
    const onA = await placementOf(job.id);
    await appendJobLogs(agentKey, job.id, { ...onA, chunks: chunks(0, 2) });
    const moved = await cutOffAndReplace(job.id, nodeA);
    expect(moved.gpus.every((g) => g.nodeId === nodeB)).toBe(true);
    const onB = await placementOf(job.id);
    expect(onB.attempt).toBe(onA.attempt + 1);

    // A comes back with the same cluster key and reports on its old run
    const before = await db().job.findUniqueOrThrow({ where: { id: job.id }, include: { gpus: { select: { id: true } } } });
    expect(await codeOf(finishJob(agent, job.id, { status: "completed", exit_code: 0, ...onA }))).toBe("stale_report");
    expect(await codeOf(finishJob(agent, job.id, { status: "failed", exit_code: 1, ...onA }))).toBe("stale_report");
    expect(await codeOf(finishJob(agent, job.id, { status: "interrupted", ...onA }))).toBe("stale_report");
    expect(await codeOf(appendJobLogs(agentKey, job.id, { ...onA, chunks: chunks(2, 3) }))).toBe("stale_report");
    // a fence that never existed is as stale as an old one
    expect(await codeOf(finishJob(agent, job.id, { status: "completed", exit_code: 0, attempt: onB.attempt, fence: randomUUID() }))).toBe(
      "stale_report",
    );
    const after = await db().job.findUniqueOrThrow({ where: { id: job.id }, include: { gpus: { select: { id: true } } } });
    expect(after).toMatchObject({ status: "running", attempts: before.attempts, fence: before.fence, failures: 0 });
    expect(after.gpus.map((g) => g.id).sort()).toEqual(before.gpus.map((g) => g.id).sort());
    // A's log holds what it sent while its run was current; B's is separate
    expect((await readJobLogs(operatorPrincipal, job.id, { attempt: onA.attempt, limit: 100 })).data.map((l) => l.seq)).toEqual([0, 1]);
    expect((await readJobLogs(operatorPrincipal, job.id, { limit: 100 })).attempt).toBe(onB.attempt);

    // B's own report ends the run, once; the placements are on record with their ends
    expect((await finishJob(agent, job.id, { status: "completed", exit_code: 0, ...onB })).status).toBe("completed");
    expect(await codeOf(finishJob(agent, job.id, { status: "completed", exit_code: 0, ...onB }))).toBe("stale_report");
    const placements = await db().jobPlacement.findMany({ where: { jobId: job.id }, orderBy: { attempt: "asc" } });
    expect(placements.map((p) => [p.attempt, p.endStatus, p.nodeIds])).toEqual([
      [onA.attempt, "queued", [nodeA]],
      [onB.attempt, "completed", [nodeB]],
    ]);
  });

  it("an interrupted run (the node's lease lapsed) is requeued without spending a retry; only agents may say so", async () => {
    const { job, agent, asT } = await placedJob({ retries: 0 });
    const p = await placementOf(job.id);
    expect(await codeOf(finishJob(asT, job.id, { status: "interrupted" }))).toBe("forbidden");
    expect(await codeOf(finishJob(operator, job.id, { status: "interrupted" }))).toBe("forbidden");
    const requeued = await finishJob(agent, job.id, { status: "interrupted", exit_code: -1, error: "the node lost its lease", ...p });
    expect(requeued).toMatchObject({ status: "queued", failures: 0 });
    expect(requeued.pendingReason).toMatch(/retries were not spent/);
    expect(await db().gpu.count({ where: { allocatedJobId: job.id } })).toBe(0);
  });

  it("no stale report ever changes a job: random interleavings of re-placements and reports (property, real database)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.constant({ op: "replace" as const }),
            fc.record({
              op: fc.constant("report" as const),
              which: fc.nat(5),
              status: fc.constantFrom("completed" as const, "failed" as const, "interrupted" as const),
            }),
          ),
          {
            minLength: 1,
            maxLength: 8,
          },
        ),
        async (ops) => {
          const { job, nodeA, agent } = await placedJob({ gpus: 4, retries: 5 });
          const seen = [await placementOf(job.id)];
          let node = nodeA;
          for (const o of ops) {
            const now = await db().job.findUniqueOrThrow({ where: { id: job.id }, include: { gpus: { select: { id: true } } } });
            if (o.op === "replace") {
              if (now.status !== "running") continue;
              const moved = await cutOffAndReplaceQuiet(job.id, node);
              if (!moved) continue;
              node = moved;
              seen.push(await placementOf(job.id));
              continue;
            }
            const p = seen[o.which % seen.length]!;
            const current = now.status === "running" && now.fence === p.fence && now.attempts === p.attempt;
            const outcome = await codeOf(finishJob(agent, job.id, { status: o.status, exit_code: o.status === "completed" ? 0 : 1, ...p }));
            const after = await db().job.findUniqueOrThrow({ where: { id: job.id }, include: { gpus: { select: { id: true } } } });
            if (current) {
              expect(outcome).toBe("ok");
              expect(after.status).not.toBe("running");
            } else {
              expect(outcome).toBe("stale_report");
              expect({
                status: after.status,
                attempts: after.attempts,
                failures: after.failures,
                fence: after.fence,
                gpus: after.gpus.length,
              }).toEqual({
                status: now.status,
                attempts: now.attempts,
                failures: now.failures,
                fence: now.fence,
                gpus: now.gpus.length,
              });
            }
            if (after.status === "queued") {
              // a requeued job runs again: a new placement, a new fence
              await db().$executeRaw`UPDATE jobs SET not_before = NULL WHERE id = ${job.id}::uuid`;
              await runSchedulerCycle("test");
              const again = await db().job.findUniqueOrThrow({ where: { id: job.id }, include: { gpus: { select: { nodeId: true } } } });
              if (again.status === "running") {
                node = again.gpus[0]!.nodeId;
                seen.push(await placementOf(job.id));
              }
            }
          }
        },
      ),
      { numRuns: 12 },
    );
  });
});

async function cutOffAndReplaceQuiet(jobId: string, from: string): Promise<string | null> {
  await db().$executeRaw`UPDATE nodes SET last_heartbeat_at = now() - interval '1 hour' WHERE id = ${from}::uuid`;
  await sweepUntilOffline(from);
  await runSchedulerCycle("test");
  const j = await db().job.findUniqueOrThrow({ where: { id: jobId }, include: { gpus: { select: { nodeId: true } } } });
  // the node comes back (its next heartbeat), ready to be cut off again later
  await recordHeartbeat(actorFor(agentPrincipal((await db().node.findUniqueOrThrow({ where: { id: from } })).clusterId)), from, {});
  return j.status === "running" ? j.gpus[0]!.nodeId : null;
}

describe("workload logs", () => {
  it("stores each chunk once under resends and parallel deliveries, reads in order with after_seq, and keeps tenants apart", async () => {
    const { job, agentKey: a, tenant } = await placedJob({ gpus: 2 });
    const p = await placementOf(job.id);
    const batch = chunks(0, 50);
    const results = await Promise.all([
      appendJobLogs(a, job.id, { ...p, chunks: batch }),
      appendJobLogs(a, job.id, { ...p, chunks: batch }),
      appendJobLogs(a, job.id, { ...p, chunks: batch.slice(10, 30) }),
    ]);
    expect(results.reduce((s, r) => s + r.stored, 0)).toBe(50);
    expect(results.every((r) => r.accepted > 0 && !r.truncated)).toBe(true);
    expect(await db().workloadLog.count({ where: { jobId: job.id } })).toBe(50);
    const placement = await db().jobPlacement.findUniqueOrThrow({ where: { jobId_attempt: { jobId: job.id, attempt: p.attempt } } });
    expect(Number(placement.logBytes)).toBe(batch.reduce((s, c) => s + Buffer.byteLength(c.text), 0));

    const asTenant = tenantAdminPrincipal(tenant.id);
    const page1 = await readJobLogs(asTenant, job.id, { limit: 20 });
    expect(page1.data.map((l) => l.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const page2 = await readJobLogs(asTenant, job.id, { after_seq: page1.next_seq!, limit: 1000 });
    expect(page2.data.map((l) => l.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 20));
    expect(page2.data[0]).toMatchObject({ stream: "stdout", text: "line 20\n" });
    // nothing new: the poller keeps its place
    expect(await readJobLogs(asTenant, job.id, { after_seq: page2.next_seq!, limit: 10 })).toMatchObject({ data: [], next_seq: 49 });

    const other = await makeTenant(8);
    expect(await codeOf(readJobLogs(tenantAdminPrincipal(other.id), job.id, { limit: 10 }))).toBe("not_found");
    expect(await codeOf(appendJobLogs(agentPrincipal((await makeCluster()).id), job.id, { ...p, chunks: chunks(50, 1) }))).toBe(
      "not_found",
    );
    expect(await codeOf(readJobLogs(asTenant, job.id, { attempt: 99, limit: 10 }))).toBe("not_found");
  });

  it("caps a run's log with one marker and acknowledges what it drops, so the agent stops resending", async () => {
    const { job, agentKey } = await placedJob({ gpus: 1 });
    const p = await placementOf(job.id);
    const cap = env().WORKLOAD_LOG_MAX_BYTES;
    const big = "x".repeat(16_000) + "\n";
    const n = Math.ceil(cap / big.length) + 3;
    let last = { truncated: false, accepted: 0 };
    for (let from = 0; from < n; from += 100) {
      last = await appendJobLogs(agentKey, job.id, { ...p, chunks: chunks(from, Math.min(100, n - from), () => big) });
    }
    expect(last.truncated).toBe(true);
    const after = await appendJobLogs(agentKey, job.id, { ...p, chunks: chunks(n, 5) });
    expect(after).toEqual({ accepted: 5, stored: 0, truncated: true });
    const rows = await db().workloadLog.findMany({ where: { jobId: job.id }, orderBy: { seq: "desc" }, take: 1 });
    expect(rows[0]).toMatchObject({ stream: "system", text: truncationMarker(cap) });
    const placement = await db().jobPlacement.findUniqueOrThrow({ where: { jobId_attempt: { jobId: job.id, attempt: p.attempt } } });
    expect(placement.logTruncated).toBe(true);
    expect(Number(placement.logBytes)).toBeLessThanOrEqual(cap);
    expect((await readJobLogs(operatorPrincipal, job.id, { limit: 1, after_seq: rows[0]!.seq - 1 })).truncated).toBe(true);
  });
});

describe("capabilities and images", () => {
  it("places work that runs an image or a command only on nodes that run containers; refuses what no such node can ever run", async () => {
    const cluster = await makeCluster();
    const gpuType = unique("C").replace(/-/g, "").slice(0, 12).toUpperCase();
    const agent = actorFor(agentPrincipal(cluster.id));
    const bare = await registerNode(agent, { hostname: unique("bare"), gpus: inventory(8, gpuType) });
    await recordHeartbeat(agent, bare.node.id, {});
    expect(bare.node.containers).toBe(false);
    const t = await makeTenant(64);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    expect(await codeOf(submitJob(asT, { name: "img", gpu_count: 2, gpu_type: gpuType, priority: 1, max_retries: 0, image: IMAGE }))).toBe(
      "unsatisfiable",
    );
    const hold = await submitJob(asT, { name: "hold", gpu_count: 2, gpu_type: gpuType, priority: 1, max_retries: 0, duration_s: 600 });
    const docker = await registerNode(agent, {
      hostname: unique("docker"),
      capabilities: { containers: true, runtime: "docker 27.3.1" },
      system: { driver_version: "560.35.03", cuda_version: "12.6" },
      gpus: inventory(4, gpuType),
    });
    await recordHeartbeat(agent, docker.node.id, {});
    expect(docker.node).toMatchObject({
      containers: true,
      containerRuntime: "docker 27.3.1",
      driverVersion: "560.35.03",
      cudaVersion: "12.6",
    });
    const img = await submitJob(asT, {
      name: "img",
      gpu_count: 2,
      gpu_type: gpuType,
      priority: 1,
      max_retries: 0,
      image: IMAGE,
      command: "python x.py",
    });
    await runSchedulerCycle("test");
    const placedImg = await getJobOrThrow(operatorPrincipal, img.id);
    expect(placedImg.status).toBe("running");
    expect(placedImg.gpus.every((g) => g.nodeId === docker.node.id)).toBe(true);
    expect((await getJobOrThrow(operatorPrincipal, hold.id)).status).toBe("running");
    // and the database refuses to put it on the bare node, whatever a writer tries
    const next = await submitJob(asT, { name: "img2", gpu_count: 1, gpu_type: gpuType, priority: 1, max_retries: 0, image: IMAGE });
    const bareGpu = await db().gpu.findFirstOrThrow({ where: { nodeId: bare.node.id, allocatedJobId: null } });
    await expect(
      db().$transaction(async (tx) => {
        await tx.$executeRaw`UPDATE jobs SET status = 'running', block_reason = NULL, started_at = now(), fence = gen_random_uuid() WHERE id = ${next.id}::uuid`;
        await tx.$executeRaw`UPDATE gpus SET allocated_job_id = ${next.id}::uuid WHERE id = ${bareGpu.id}::uuid`;
      }),
    ).rejects.toThrow(/does not run containers/);
    // an older agent re-registering without capabilities loses the capability
    const again = await registerNode(agent, { hostname: docker.node.hostname, gpus: inventory(0, gpuType) });
    expect(again.node.containers).toBe(false);
  });

  it("a command needs an image: the operator's default, or a 400 naming image; hostile image strings are refused at submit", async () => {
    const { gpuType } = await availableFleet(1, 2);
    const t = await makeTenant(8);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const refused = await submitJob(asT, {
      name: "host",
      gpu_count: 1,
      gpu_type: gpuType,
      priority: 5,
      max_retries: 0,
      command: "nvidia-smi",
    }).catch((e) => e);
    expect(env().DEFAULT_JOB_IMAGE).toBeUndefined();
    expect(refused).toMatchObject({ code: "validation_failed", details: [{ path: "image" }] });
    expect(await db().job.count({ where: { tenantId: t.id } })).toBe(0);
  });
});

describe("node-bound agent keys and replica report tokens", () => {
  it("a key bound to one node speaks for that node only: heartbeats, metrics, registration and reports about other nodes are refused", async () => {
    const { cluster, gpuType, nodes } = await availableFleet(2, 2);
    const [a, b] = nodes;
    const { key } = await createApiKey(systemActor, {
      name: unique("node-key"),
      scope: "agent",
      cluster_id: cluster.id,
      node_id: a!.node.id,
    });
    const p = await authenticateApiKey(key);
    expect(p).toMatchObject({ kind: "agent", clusterId: cluster.id, nodeId: a!.node.id });
    const bound = actorFor(p);
    await recordHeartbeat(bound, a!.node.id, {});
    expect(await codeOf(recordHeartbeat(bound, b!.node.id, {}))).toBe("not_found");
    const r = await ingestGpuMetrics(
      p,
      [b!.gpus[0], a!.gpus[0]].map((g) => ({
        gpu_uuid: g!.uuid,
        utilization_pct: 5,
        memory_used_mb: 1,
        temperature_c: 40,
        power_draw_w: 90,
      })),
    );
    expect(r.accepted).toBe(1);
    expect(r.rejected).toEqual([{ index: 0, error: expect.stringContaining("this key's node") }]);
    expect(await codeOf(registerNode(bound, { hostname: b!.node.hostname, gpus: [] }))).toBe("forbidden");
    // a job on the other node is not this key's to report
    const t = await makeTenant(8);
    const job = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
      name: "on-b",
      gpu_count: 2,
      gpu_type: gpuType,
      priority: 1,
      max_retries: 0,
      cluster_id: cluster.id,
    });
    await runSchedulerCycle("test");
    const placed = await getJobOrThrow(operatorPrincipal, job.id);
    const otherNode = placed.gpus[0]!.nodeId === a!.node.id ? null : placed.gpus[0]!.nodeId;
    if (otherNode)
      expect(await codeOf(finishJob(bound, job.id, { status: "completed", ...(await placementOf(job.id)) }))).toBe("not_found");
    expect(
      await codeOf(createApiKey(systemActor, { name: "x", scope: "agent", cluster_id: (await makeCluster()).id, node_id: a!.node.id })),
    ).toBe("validation_failed");
    expect(await codeOf(createApiKey(systemActor, { name: "x", scope: "tenant", tenant_id: t.id, node_id: a!.node.id }))).toBe(
      "validation_failed",
    );
  });

  it("no agent key takes another node's GPUs by re-registering its own node with their UUIDs; an operator moves only idle GPUs", async () => {
    const { cluster, gpuType, nodes } = await availableFleet(2, 2);
    const [a, b] = nodes;
    const { key } = await createApiKey(systemActor, {
      name: unique("node-key"),
      scope: "agent",
      cluster_id: cluster.id,
      node_id: a!.node.id,
    });
    const bound = actorFor(await authenticateApiKey(key));
    const t = await makeTenant(8);
    const job = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
      name: "on-b",
      gpu_count: 2,
      gpu_type: gpuType,
      priority: 1,
      max_retries: 0,
      cluster_id: cluster.id,
    });
    await runSchedulerCycle("test");
    const held = await db().gpu.findMany({ where: { allocatedJobId: job.id }, select: { uuid: true, nodeId: true, index: true } });
    const victim = nodes.find((n) => n.node.id === held[0]!.nodeId)!;
    const thief = victim === a ? b! : a!;
    const stolen = victim.gpus.map((g) => ({ uuid: g.uuid, index: g.index + 10, gpu_type: gpuType, memory_total_mb: 81_559 }));
    const thiefActor = thief === a ? bound : actorFor(agentPrincipal(cluster.id));
    const refused = await registerNode(thiefActor, { hostname: thief.node.hostname, gpus: [...inventoryOf(thief), ...stolen] }).catch(
      (e) => e,
    );
    expect(refused).toMatchObject({ code: "conflict", details: [{ path: expect.stringMatching(/^gpus\[[23]\]\.uuid$/) }] });
    expect(
      (await db().gpu.findMany({ where: { uuid: { in: stolen.map((g) => g.uuid) } } })).every((g) => g.nodeId === victim.node.id),
    ).toBe(true);
    expect((await getJobOrThrow(operatorPrincipal, job.id)).status).toBe("running");
    // the operator may re-home an idle GPU, never a held one
    const idle = await db().gpu.findFirst({ where: { nodeId: thief.node.id, allocatedJobId: null } });
    expect(idle).not.toBeNull();
    expect(
      await codeOf(
        registerNode(operator, {
          cluster_id: cluster.id,
          hostname: victim.node.hostname,
          gpus: [...inventoryOf(victim), { uuid: idle!.uuid, index: 9, gpu_type: gpuType, memory_total_mb: 81_559 }],
        }),
      ),
    ).toBe("ok");
    const heldUuid = held[0]!.uuid;
    expect(
      await codeOf(
        registerNode(operator, {
          cluster_id: cluster.id,
          hostname: thief.node.hostname,
          gpus: [{ uuid: heldUuid, index: 0, gpu_type: gpuType, memory_total_mb: 81_559 }],
        }),
      ),
    ).toBe("conflict");
    // and a key bound to node a reads node a, and no other
    expect(await codeOf(getNodeOrThrow(bound.principal, a!.node.id))).toBe("ok");
    expect(await codeOf(getNodeOrThrow(bound.principal, b!.node.id))).toBe("not_found");
  });

  it("a serving container's token reports its own replica's samples only, and dies with the placement", async () => {
    const { cluster, gpuType } = await availableFleet(2, 2);
    const t = await makeTenant(8);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const e = await createEndpoint(asT, {
      name: unique("ep").toLowerCase(),
      model: "org/model",
      image: "vllm/vllm-openai:v0.6.3",
      gpu_type: gpuType,
      gpus_per_replica: 1,
      replicas: 2,
      autoscale_metric: "none",
      cooldown_s: 300,
    });
    await reconcileEndpoints({ endpointId: e.id });
    const replicas = await db().endpointReplica.findMany({
      where: { endpointId: e.id, status: { not: "stopped" } },
      orderBy: { startedAt: "asc" },
    });
    expect(replicas).toHaveLength(2);
    expect(replicas.every((r) => r.gpuIds.length === 1)).toBe(true);
    const hb = await recordHeartbeat(actorFor(agentPrincipal(cluster.id)), replicas[0]!.nodeId!, {});
    const assignment = hb.assignments.find((x) => x.kind === "endpoint_replica" && x.replica_id === replicas[0]!.id);
    expect(assignment).toMatchObject({
      kind: "endpoint_replica",
      attempt: 1,
      fence: replicas[0]!.fence,
      image: "vllm/vllm-openai:v0.6.3",
      report_token: expect.stringMatching(/^gfw_/),
    });
    const token = (assignment as { report_token: string }).report_token;
    const w = await authenticateReplicaToken(token);
    expect(w).toMatchObject({ kind: "workload", replicaId: replicas[0]!.id, endpointId: e.id, tenantId: t.id });
    const sample = { requests: 10, errors: 0, p50_ms: 50, p95_ms: 90, p99_ms: 120, healthy: true };
    const own = await ingestEndpointMetrics(actorFor(w), e.id, [
      sample,
      { ...sample, replica_id: replicas[1]!.id, recorded_at: new Date(Date.now() - 1000).toISOString() },
    ]);
    expect(own).toEqual({ accepted: 1, rejected: [{ index: 1, error: expect.stringContaining("its own replica") }] });
    // a token cannot be bent to another replica, and stops working when its replica stops
    // (a character well inside the secret: the last one of base64url also carries padding bits, which some swaps leave equal)
    const at = token.length - 8;
    expect(await codeOf(authenticateReplicaToken(`${token.slice(0, at)}${token[at] === "A" ? "B" : "A"}${token.slice(at + 1)}`))).toBe(
      "unauthorized",
    );
    expect(await codeOf(authenticateReplicaToken(`gfw_${replicas[1]!.id.replaceAll("-", "")}_${token.split("_").at(-1)}`))).toBe(
      "unauthorized",
    );
    await db().$transaction(async (tx) => {
      await tx.$executeRaw`UPDATE endpoint_replicas SET status = 'stopped', stopped_at = now(), stop_reason = 'test', health_reason = NULL, unhealthy_since = NULL WHERE id = ${replicas[0]!.id}::uuid`;
      await tx.$executeRaw`UPDATE gpus SET allocated_replica_id = NULL WHERE allocated_replica_id = ${replicas[0]!.id}::uuid`;
    });
    expect(await codeOf(authenticateReplicaToken(token))).toBe("unauthorized");
  });

  it("agents name a replica's placement: a missing fence is a 400, a stale one a 409 that stores nothing; replica logs are fenced too", async () => {
    const { cluster, gpuType } = await availableFleet(1, 2);
    const t = await makeTenant(8);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const e = await createEndpoint(asT, {
      name: unique("ep").toLowerCase(),
      model: "org/model",
      gpu_type: gpuType,
      gpus_per_replica: 1,
      replicas: 1,
      autoscale_metric: "none",
      cooldown_s: 300,
    });
    await reconcileEndpoints({ endpointId: e.id });
    const r = await db().endpointReplica.findFirstOrThrow({ where: { endpointId: e.id } });
    const agentKey = agentPrincipal(cluster.id);
    const agent = actorFor(agentKey);
    const s = { replica_id: r.id, requests: 1, errors: 0, p50_ms: 1, p95_ms: 2, p99_ms: 3, healthy: true };
    expect(await ingestEndpointMetrics(agent, e.id, [s]).catch((x) => x)).toMatchObject({
      code: "validation_failed",
      details: [{ path: "body.samples[0].fence" }],
    });
    expect(await codeOf(ingestEndpointMetrics(agent, e.id, [{ ...s, fence: randomUUID() }]))).toBe("stale_report");
    expect(await db().endpointMetric.count({ where: { endpointId: e.id } })).toBe(0);
    expect((await ingestEndpointMetrics(agent, e.id, [{ ...s, fence: r.fence }])).accepted).toBe(1);

    const logs = { attempt: 1, fence: r.fence, chunks: chunks(0, 3) };
    expect((await appendReplicaLogs(agentKey, e.id, r.id, logs)).stored).toBe(3);
    expect((await appendReplicaLogs(agentKey, e.id, r.id, logs)).stored).toBe(0);
    expect(await codeOf(appendReplicaLogs(agentKey, e.id, r.id, { ...logs, fence: randomUUID() }))).toBe("stale_report");
    expect(await codeOf(appendReplicaLogs(agentPrincipal((await makeCluster()).id), e.id, r.id, logs))).toBe("not_found");
    expect((await readReplicaLogs(tenantAdminPrincipal(t.id), e.id, { limit: 10 })).data.map((l) => l.text)).toEqual([
      "line 0\n",
      "line 1\n",
      "line 2\n",
    ]);
    expect(await codeOf(readReplicaLogs(tenantAdminPrincipal((await makeTenant(1)).id), e.id, { limit: 10 }))).toBe("not_found");
  });
});

describe("tenant-visible GPU telemetry", () => {
  it("shows the GPUs a job held only while it held them, to its tenant and operators", async () => {
    const { job, agent, cluster, tenant } = await placedJob({ gpus: 1 });
    const p = await placementOf(job.id);
    const placement = await db().jobPlacement.findUniqueOrThrow({ where: { jobId_attempt: { jobId: job.id, attempt: p.attempt } } });
    const gpu = await db().gpu.findUniqueOrThrow({ where: { id: placement.gpuIds[0]! } });
    const started = placement.startedAt.getTime();
    // samples of the GPU before the job, while it ran, and after it ended
    const at = (ms: number) => new Date(started + ms).toISOString();
    await finishJob(agent, job.id, { status: "completed", exit_code: 0, ...p });
    const ended = (
      await db().jobPlacement.findUniqueOrThrow({ where: { jobId_attempt: { jobId: job.id, attempt: p.attempt } } })
    ).endedAt!.getTime();
    const samples = [
      -120_000,
      -30_000,
      1,
      Math.max(2, Math.floor((ended - started) / 2)),
      ended - started + 5_000,
      ended - started + 60_000,
    ].map((ms, i) => ({
      gpu_uuid: gpu.uuid,
      recorded_at: at(ms),
      utilization_pct: ms > 0 && at(ms) < new Date(ended).toISOString() ? 97 : 11,
      memory_used_mb: 1000 + i,
      temperature_c: 60,
      power_draw_w: 300,
    }));
    await ingestGpuMetrics(agentPrincipal(cluster.id), samples);
    await foldGpuRollups();
    const t = await jobGpuTelemetry(tenantAdminPrincipal(tenant.id), job.id, {
      from: new Date(started - 300_000).toISOString(),
      to: new Date(ended + 300_000).toISOString(),
    });
    expect(t.series).toHaveLength(1);
    expect(t.series[0]).toMatchObject({
      gpu_id: gpu.id,
      attempt: p.attempt,
      held_from: placement.startedAt.toISOString(),
      held_to: new Date(ended).toISOString(),
    });
    const points = t.series[0]!.points;
    expect(points.length).toBeGreaterThan(0);
    expect(points.every((pt) => pt.utilization_avg === 97)).toBe(true);
    expect(await codeOf(jobGpuTelemetry(tenantAdminPrincipal((await makeTenant(1)).id), job.id, {}))).toBe("not_found");
    expect(
      (
        await jobGpuTelemetry(operatorPrincipal, job.id, {
          from: new Date(started - 300_000).toISOString(),
          to: new Date(ended + 300_000).toISOString(),
        })
      ).series,
    ).toHaveLength(1);
    const rows = await pool().query(`SELECT count(*)::int AS n FROM gpu_metrics WHERE gpu_id = $1`, [gpu.id]);
    expect(rows.rows[0].n).toBe(samples.length);
  });
});
