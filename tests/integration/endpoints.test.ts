import { describe, expect, it } from "vitest";
import { evaluateAlerts } from "@/lib/alerts/evaluate-alerts";
import { createAlertRule } from "@/lib/alerts/alert-rules";
import { generateInvoice } from "@/lib/billing/generate-invoice";
import { depositFunds } from "@/lib/billing/ledger";
import { tenantMonthSpend } from "@/lib/billing/month-spend";
import { accrueRunningUsage, enforcePrepaidBalances } from "@/lib/billing/meter";
import { createTenant } from "@/lib/tenants/create-tenant";
import { db, pool } from "@/lib/db/client";
import { endpointSeries, ingestEndpointMetrics } from "@/lib/endpoints/endpoint-metrics";
import { endpointSla } from "@/lib/endpoints/endpoint-sla";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { deleteEndpoint } from "@/lib/endpoints/delete-endpoint";
import { getEndpointOrThrow } from "@/lib/endpoints/get-endpoint";
import { listEndpointHistory } from "@/lib/endpoints/list-endpoint-history";
import { updateEndpoint } from "@/lib/endpoints/update-endpoint";
import { reconcileEndpoints } from "@/lib/endpoints/reconcile-endpoints";
import type { CreateEndpointInput } from "@/lib/endpoints/schemas";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { gpuJson } from "@/lib/fleet/node-schemas";
import { getGpuOrThrow, nodeDetail } from "@/lib/fleet/queries";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { submitJob } from "@/lib/jobs/submit-job";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { systemActor, type TenantPrincipal } from "@/lib/auth/principal";
import { tenantOverview } from "@/lib/platform/overview";
import {
  actorFor,
  agentPrincipal,
  availableFleet,
  makeCluster,
  makeTenant,
  operatorPrincipal,
  tenantAdminPrincipal,
  unique,
} from "../support/fixtures";
import { codeAndFieldOf } from "../support/outcomes";

const operator = actorFor(operatorPrincipal);

const fleet = (nodes: number, gpusPerNode = 8) => availableFleet(nodes, gpusPerNode, "E");

function spec(gpuType: string, o: Partial<CreateEndpointInput> = {}): CreateEndpointInput {
  return {
    name: unique("ep"),
    model: "meta-llama/Llama-3.1-8B-Instruct",
    gpu_type: gpuType,
    gpus_per_replica: 2,
    replicas: 2,
    autoscale_metric: "none",
    cooldown_s: 300,
    ...o,
  };
}

const healthy = (replicaId: string, o: Record<string, unknown> = {}) => ({
  replica_id: replicaId,
  requests: 120,
  errors: 0,
  p50_ms: 90,
  p95_ms: 220,
  p99_ms: 400,
  tokens_per_s: 2000,
  healthy: true,
  ...o,
});

/** Every live replica reports one healthy sample; then the reconciler runs. */
async function makeReady(endpointId: string, actor = operator) {
  const e = await getEndpointOrThrow(actor.principal, endpointId);
  const live = e.replicas.filter((r) => r.status !== "stopped");
  if (live.length)
    await ingestEndpointMetrics(
      actor,
      endpointId,
      live.map((r) => healthy(r.id)),
    );
  await reconcileEndpoints({ endpointId });
  return getEndpointOrThrow(actor.principal, endpointId);
}

async function allocationInvariants(gpuType: string) {
  const { rows } = await pool().query<{ both: number; short_replicas: number; short_jobs: number }>(
    `SELECT (SELECT count(*) FROM gpus WHERE gpu_type = $1 AND allocated_job_id IS NOT NULL AND allocated_replica_id IS NOT NULL)::int AS both,
            (SELECT count(*) FROM endpoint_replicas r WHERE r.gpu_type = $1 AND r.status <> 'stopped'
               AND (SELECT count(*) FROM gpus g WHERE g.allocated_replica_id = r.id) <> r.gpu_count)::int AS short_replicas,
            (SELECT count(*) FROM jobs j WHERE j.gpu_type = $1 AND j.status = 'running'
               AND (SELECT count(*) FROM gpus g WHERE g.allocated_job_id = j.id) <> j.gpu_count)::int AS short_jobs`,
    [gpuType],
  );
  return rows[0]!;
}

describe("endpoints: creation, placement, readiness", () => {
  it("places replicas on distinct nodes, serves them through heartbeats, turns ready on healthy samples, records transitions", async () => {
    const { cluster, gpuType, nodes } = await fleet(3);
    const t = await makeTenant(64);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const e = await createEndpoint(asT, spec(gpuType, { replicas: 3, sla_p95_ms: 500, sla_availability_pct: 99.5 }));
    expect(e.status).toBe("provisioning");
    const live = e.replicas.filter((r) => r.status === "starting");
    expect(live).toHaveLength(3);
    expect(new Set(live.map((r) => r.nodeId)).size).toBe(3);
    expect(live.every((r) => r.gpus.length === 2)).toBe(true);

    const hb = await recordHeartbeat(actorFor(agentPrincipal(cluster.id)), live[0]!.nodeId!, {});
    const served = hb.assignments.find((a) => a.kind === "endpoint_replica" && a.replica_id === live[0]!.id);
    expect(served).toMatchObject({
      endpoint_id: e.id,
      model: e.model,
      gpu_ids: live[0]!.gpus.map((g) => g.id),
      metrics_path: `/api/endpoints/${e.id}/metrics`,
    });
    // the registry says who holds each GPU
    expect(gpuJson(await getGpuOrThrow(operatorPrincipal, live[0]!.gpus[0]!.id))).toMatchObject({
      allocated_replica_id: live[0]!.id,
      allocated_job_id: null,
    });
    const node = await nodeDetail(live[0]!.nodeId!);
    expect(node!.gpus.filter((g) => g.allocatedReplica?.endpoint.name === e.name)).toHaveLength(2);

    // two replicas report healthy: not ready yet; the third makes it ready
    await ingestEndpointMetrics(
      asT,
      e.id,
      live.slice(0, 2).map((r) => healthy(r.id)),
    );
    await reconcileEndpoints({ endpointId: e.id });
    expect((await getEndpointOrThrow(asT.principal, e.id)).status).toBe("provisioning");
    const ready = await makeReady(e.id, asT);
    expect(ready.status).toBe("ready");
    const history = await listEndpointHistory(asT.principal, e.id);
    expect(history.transitions.map((x) => `${x.from_status ?? "∅"}→${x.to_status}`).reverse()).toEqual([
      "∅→provisioning",
      "provisioning→ready",
    ]);
    expect(nodes).toHaveLength(3);
  });

  it("refuses what can never run (422 naming the field), duplicates (409), bad bounds (400); changes nothing", async () => {
    const { gpuType } = await fleet(1, 4);
    const t = await makeTenant(8);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    expect(await codeAndFieldOf(createEndpoint(asT, spec(gpuType, { gpus_per_replica: 4, replicas: 3 })))).toBe(
      "unsatisfiable:min_replicas",
    );
    expect(await codeAndFieldOf(createEndpoint(asT, spec(gpuType, { gpus_per_replica: 8, replicas: 1 })))).toBe(
      "unsatisfiable:gpus_per_replica",
    );
    expect(await codeAndFieldOf(createEndpoint(asT, spec("NOSUCHTYPE", { replicas: 1 })))).toBe("unsatisfiable:gpu_type");
    expect(await db().endpoint.count({ where: { tenantId: t.id } })).toBe(0);
    const ok = await createEndpoint(asT, spec(gpuType, { name: "chat", replicas: 1, max_replicas: 2 }));
    expect(await codeAndFieldOf(createEndpoint(asT, spec(gpuType, { name: "chat", replicas: 1 })))).toBe("conflict:name");
    expect(await codeAndFieldOf(updateEndpoint(asT, ok.id, { min_replicas: 2 }))).toBe("validation_failed:min_replicas");
    expect(await codeAndFieldOf(updateEndpoint(asT, ok.id, { autoscale_metric: "p95_ms" }))).toBe("validation_failed:autoscale_target");
    // another tenant's endpoint does not exist for this one
    const other = actorFor(tenantAdminPrincipal((await makeTenant(8)).id));
    expect(await codeAndFieldOf(updateEndpoint(other, ok.id, { replicas: 2 }))).toBe("not_found");
    expect(await codeAndFieldOf(ingestEndpointMetrics(other, ok.id, [healthy(ok.replicas[0]!.id)]))).toBe("not_found");
    expect((await getEndpointOrThrow(asT.principal, ok.id)).desiredReplicas).toBe(1);
  });
});

describe("endpoints: one allocator with jobs", () => {
  it("shares the tenant's quota with jobs: replicas count, a job over the rest is blocked", async () => {
    const { gpuType } = await fleet(2);
    const t = await makeTenant(8);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    await createEndpoint(asT, spec(gpuType, { gpus_per_replica: 3, replicas: 2 }));
    const job = await submitJob(asT, { name: "train", gpu_count: 4, gpu_type: gpuType, priority: 5, max_retries: 0 });
    expect(job).toMatchObject({ status: "blocked", blockReason: "quota" });
    const { rows } = await pool().query<{ in_use: number }>(`SELECT in_use FROM tenant_gpus_in_use(ARRAY[$1::uuid])`, [t.id]);
    expect(rows[0]!.in_use).toBe(6);
    // the tenant's home page counts the same
    expect(await tenantOverview(tenantAdminPrincipal(t.id) as TenantPrincipal)).toMatchObject({
      figures: { gpu_in_use: 6, gpu_in_use_by: { jobs: 0, endpoint_replicas: 6, pods: 0, reserved: 0 } },
      jobsRunning: 0,
      jobsWaiting: 1,
      endpointsTotal: 1,
      endpointsServing: 0,
    });
  });

  it("the database refuses a GPU held by a job and a replica at once, and a replica short of its GPUs", async () => {
    const { gpuType } = await fleet(1, 4);
    const t = await makeTenant(16);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const e = await createEndpoint(asT, spec(gpuType, { gpus_per_replica: 2, replicas: 1 }));
    const job = await submitJob(asT, { name: "j", gpu_count: 2, gpu_type: gpuType, priority: 1, max_retries: 0 });
    await runSchedulerCycle("test");
    const jobGpu = await db().gpu.findFirstOrThrow({ where: { allocatedJobId: job.id } });
    const replica = e.replicas[0]!;
    await expect(pool().query(`UPDATE gpus SET allocated_replica_id = $1 WHERE id = $2`, [replica.id, jobGpu.id])).rejects.toMatchObject({
      code: "23514",
    });
    await expect(pool().query(`UPDATE gpus SET allocated_replica_id = NULL WHERE id = $1`, [replica.gpus[0]!.id])).rejects.toMatchObject({
      code: "23514",
    });
    // a replica always belongs to its endpoint's tenant (the quota counts it there)
    const other = await makeTenant(16);
    await expect(pool().query(`UPDATE endpoint_replicas SET tenant_id = $2 WHERE id = $1`, [replica.id, other.id])).rejects.toMatchObject({
      code: "23503",
    });
    expect(await allocationInvariants(gpuType)).toEqual({ both: 0, short_replicas: 0, short_jobs: 0 });
  });

  it("parallel scheduling cycles, scale-ups and reconciles never double-hold a GPU or break a gang", async () => {
    const { gpuType } = await fleet(2);
    const t = await makeTenant(64);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const endpoints = [];
    for (let i = 0; i < 3; i++)
      endpoints.push(await createEndpoint(asT, spec(gpuType, { gpus_per_replica: 1, replicas: 1, max_replicas: 8 })));
    for (let i = 0; i < 6; i++) await submitJob(asT, { name: `j${i}`, gpu_count: 2, gpu_type: gpuType, priority: 5, max_retries: 0 });
    await Promise.all([
      runSchedulerCycle("race-1"),
      ...endpoints.map((e) => updateEndpoint(asT, e.id, { replicas: 6 })),
      runSchedulerCycle("race-2"),
      reconcileEndpoints(),
      runSchedulerCycle("race-3"),
      reconcileEndpoints(),
    ]);
    expect(await allocationInvariants(gpuType)).toEqual({ both: 0, short_replicas: 0, short_jobs: 0 });
    const held = await db().gpu.count({
      where: { gpuType, OR: [{ allocatedJobId: { not: null } }, { allocatedReplicaId: { not: null } }] },
    });
    const { rows } = await pool().query<{ replicas: number; jobs: number }>(
      `SELECT (SELECT COALESCE(sum(gpu_count), 0) FROM endpoint_replicas WHERE gpu_type = $1 AND status <> 'stopped')::int AS replicas,
              (SELECT COALESCE(sum(gpu_count), 0) FROM jobs WHERE gpu_type = $1 AND status = 'running')::int AS jobs`,
      [gpuType],
    );
    expect(held).toBe(rows[0]!.replicas + rows[0]!.jobs);
    expect(held).toBe(16);
  });
});

describe("endpoints: replacement and scaling", () => {
  it("replaces a replica whose node is quarantined, on another node, and comes back to ready", async () => {
    const { gpuType, nodes } = await fleet(3);
    const t = await makeTenant(32);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const e = await makeReady((await createEndpoint(asT, spec(gpuType, { replicas: 2 }))).id, asT);
    expect(e.status).toBe("ready");
    const victim = e.replicas.find((r) => r.status === "ready")!;
    await changeNodeStatus(operator, victim.nodeId!, "quarantined", "test fault");
    await reconcileEndpoints({ endpointId: e.id });
    const after = await getEndpointOrThrow(asT.principal, e.id);
    const stopped = after.replicas.find((r) => r.id === victim.id)!;
    expect(stopped).toMatchObject({ status: "stopped", stopReason: expect.stringContaining("quarantined") });
    expect(await db().gpu.count({ where: { allocatedReplicaId: victim.id } })).toBe(0);
    const live = after.replicas.filter((r) => r.status !== "stopped");
    expect(live).toHaveLength(2);
    expect(live.every((r) => r.nodeId !== victim.nodeId)).toBe(true);
    expect(after.status).toBe("degraded");
    expect((await makeReady(e.id, asT)).status).toBe("ready");
    expect(nodes.length).toBe(3);
  });

  it("moves replicas off a draining node make-before-break: the old one serves until its replacement is ready", async () => {
    const { gpuType } = await fleet(3);
    const t = await makeTenant(32);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const e = await makeReady((await createEndpoint(asT, spec(gpuType, { replicas: 2 }))).id, asT);
    const old = e.replicas.find((r) => r.status === "ready")!;
    await changeNodeStatus(operator, old.nodeId!, "draining", "kernel upgrade");
    await reconcileEndpoints({ endpointId: e.id });
    let now = await getEndpointOrThrow(asT.principal, e.id);
    const live = now.replicas.filter((r) => r.status !== "stopped");
    expect(live).toHaveLength(3);
    expect(live.find((r) => r.id === old.id)!.status).toBe("ready");
    const replacement = live.find((r) => r.status === "starting")!;
    expect(replacement.nodeId).not.toBe(old.nodeId);
    // two replicas serve throughout: the endpoint stays ready, and more passes change nothing until the new one is
    expect(now.status).toBe("ready");
    await reconcileEndpoints({ endpointId: e.id });
    expect((await getEndpointOrThrow(asT.principal, e.id)).replicas.find((r) => r.id === old.id)!.status).toBe("ready");
    await ingestEndpointMetrics(asT, e.id, [healthy(replacement.id)]);
    await reconcileEndpoints({ endpointId: e.id });
    now = await getEndpointOrThrow(asT.principal, e.id);
    expect(now.replicas.find((r) => r.id === old.id)).toMatchObject({ status: "stopped", stopReason: expect.stringContaining("draining") });
    expect(now.replicas.filter((r) => r.status === "ready")).toHaveLength(2);
    expect(now.status).toBe("ready");
    expect(await db().gpu.count({ where: { nodeId: old.nodeId!, allocatedReplicaId: { not: null } } })).toBe(0);
    expect((await listEndpointHistory(asT.principal, e.id)).transitions.map((x) => x.to_status)).not.toContain("degraded");
  });

  it("marks a silent replica unhealthy, one reporting unhealthy at once, and replaces it after the grace", async () => {
    const { gpuType } = await fleet(2);
    const t = await makeTenant(32);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const e = await makeReady((await createEndpoint(asT, spec(gpuType, { replicas: 2 }))).id, asT);
    const [a, b] = e.replicas.filter((r) => r.status === "ready");
    await pool().query(`UPDATE endpoint_replicas SET last_sample_at = now() - interval '2 minutes' WHERE id = $1`, [a!.id]);
    await ingestEndpointMetrics(asT, e.id, [healthy(b!.id, { healthy: false, recorded_at: new Date(Date.now() + 1000).toISOString() })]);
    await reconcileEndpoints({ endpointId: e.id });
    let now = await getEndpointOrThrow(asT.principal, e.id);
    expect(now.replicas.find((r) => r.id === a!.id)).toMatchObject({
      status: "unhealthy",
      healthReason: expect.stringContaining("no samples"),
    });
    expect(now.replicas.find((r) => r.id === b!.id)).toMatchObject({ status: "unhealthy", healthReason: "health check failing" });
    expect(now.status).toBe("degraded");
    await pool().query(`UPDATE endpoint_replicas SET unhealthy_since = now() - interval '10 minutes' WHERE id = $1`, [a!.id]);
    await reconcileEndpoints({ endpointId: e.id });
    now = await getEndpointOrThrow(asT.principal, e.id);
    expect(now.replicas.find((r) => r.id === a!.id)).toMatchObject({
      status: "stopped",
      stopReason: expect.stringContaining("unhealthy for over"),
    });
    expect(now.replicas.filter((r) => r.status !== "stopped")).toHaveLength(2);
  });

  it("autoscales on requests per replica within max, logs the decision, and holds through the cool-down", async () => {
    const { gpuType } = await fleet(2);
    const t = await makeTenant(32);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const e = await makeReady(
      (
        await createEndpoint(
          asT,
          spec(gpuType, {
            gpus_per_replica: 1,
            replicas: 1,
            max_replicas: 3,
            autoscale_metric: "requests_per_replica",
            autoscale_target: 10,
          }),
        )
      ).id,
      asT,
    );
    // ~ 6,000 requests in the last two minutes: far over 10/s for one replica
    await ingestEndpointMetrics(asT, e.id, [
      healthy(e.replicas[0]!.id, { requests: 6000, recorded_at: new Date(Date.now() - 2000).toISOString() }),
    ]);
    await reconcileEndpoints({ endpointId: e.id });
    let now = await getEndpointOrThrow(asT.principal, e.id);
    expect(now.desiredReplicas).toBe(3);
    expect(now.replicas.filter((r) => r.status !== "stopped")).toHaveLength(3);
    expect(now.status).toBe("scaling");
    const history = await listEndpointHistory(asT.principal, e.id);
    expect(history.scaling[0]).toMatchObject({ from_replicas: 1, to_replicas: 3, outcome: "scale_up", metric: "requests_per_replica" });
    // the load is gone but the cool-down holds the replicas; the refusal is logged once
    await pool().query(`DELETE FROM endpoint_metrics WHERE endpoint_id = $1`, [e.id]);
    await pool().query(`DELETE FROM endpoint_metrics_1m WHERE endpoint_id = $1`, [e.id]);
    await ingestEndpointMetrics(
      asT,
      e.id,
      now.replicas.filter((r) => r.status !== "stopped").map((r) => healthy(r.id, { requests: 1 })),
    );
    await reconcileEndpoints({ endpointId: e.id });
    await reconcileEndpoints({ endpointId: e.id });
    now = await getEndpointOrThrow(asT.principal, e.id);
    expect(now.desiredReplicas).toBe(3);
    expect(now.status).toBe("ready");
    const held = (await listEndpointHistory(asT.principal, e.id)).scaling.filter((d) => d.outcome === "held");
    expect(held).toHaveLength(1);
    expect(held[0]!.reason).toContain("cool-down");
  });

  it("scales down by hand, stopping the extra replicas, and stops and starts again", async () => {
    const { gpuType } = await fleet(2);
    const t = await makeTenant(32);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const e = await makeReady((await createEndpoint(asT, spec(gpuType, { replicas: 3 }))).id, asT);
    const down = await updateEndpoint(asT, e.id, { replicas: 1 });
    expect(down.replicas.filter((r) => r.status !== "stopped")).toHaveLength(1);
    expect(down.minReplicas).toBe(1);
    expect(down.status).toBe("ready");
    const stopped = await updateEndpoint(asT, e.id, { stopped: true });
    expect(stopped.status).toBe("stopped");
    expect(await db().gpu.count({ where: { allocatedReplica: { endpointId: e.id } } })).toBe(0);
    const started = await updateEndpoint(asT, e.id, { stopped: false });
    expect(started.status).toBe("provisioning");
    expect(started.replicas.filter((r) => r.status === "starting")).toHaveLength(1);
    await deleteEndpoint(asT, e.id);
    expect(await codeAndFieldOf(getEndpointOrThrow(asT.principal, e.id))).toBe("not_found");
    expect(await db().gpu.count({ where: { allocatedReplica: { endpointId: e.id } } })).toBe(0);
  });
});

describe("endpoints: metrics, SLA, alerts, billing", () => {
  it("stores samples once, rejects bad ones by index, keeps exact per-minute rollups, and limits agents to their cluster", async () => {
    const { cluster, gpuType } = await fleet(1);
    const t = await makeTenant(16);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const e = await createEndpoint(asT, spec(gpuType, { replicas: 1 }));
    const r = e.replicas[0]!.id;
    const at = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 120_000);
    const batch = [
      healthy(r, { recorded_at: at.toISOString(), requests: 100, errors: 2, p95_ms: 200 }),
      healthy(r, { recorded_at: new Date(at.getTime() + 10_000).toISOString(), requests: 300, errors: 0, p95_ms: 400 }),
      healthy("00000000-0000-4000-8000-000000000000", { recorded_at: at.toISOString() }),
      healthy(r, { recorded_at: new Date(Date.now() + 3_600_000).toISOString() }),
    ];
    const first = await ingestEndpointMetrics(asT, e.id, batch);
    expect(first).toEqual({
      accepted: 2,
      rejected: [
        { index: 2, error: expect.stringContaining("not a replica") },
        { index: 3, error: expect.stringContaining("future") },
      ],
    });
    await ingestEndpointMetrics(asT, e.id, batch.slice(0, 2));
    const rows = await db().endpointMetricMinute.findMany({ where: { endpointId: e.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ samples: 2, requests: 400n, errors: 2n, replicasReporting: 1 });
    expect(rows[0]!.p95Ms).toBeCloseTo((100 * 200 + 300 * 400) / 400, 3);
    const series = await endpointSeries(asT.principal, e.id, {});
    expect(series).toMatchObject({ step: "1m", step_s: 60 });
    expect(series.points.find((x) => x.t === at.toISOString())).toMatchObject({
      requests_per_s: 6.67,
      error_rate_pct: 0.5,
      replicas_reporting: 1,
    });
    expect(series.points.find((x) => x.t === new Date(at.getTime() - 60_000).toISOString())).toMatchObject({
      requests_per_s: null,
      p95_ms: null,
    });

    const otherCluster = await makeCluster();
    expect(await codeAndFieldOf(ingestEndpointMetrics(actorFor(agentPrincipal(otherCluster.id)), e.id, [healthy(r)]))).toBe("not_found");
    const { fence } = await db().endpointReplica.findUniqueOrThrow({ where: { id: r }, select: { fence: true } });
    const own = await ingestEndpointMetrics(actorFor(agentPrincipal(cluster.id)), e.id, [
      healthy(r, { fence }),
      { ...healthy(r), replica_id: undefined, recorded_at: new Date(Date.now() - 5000).toISOString() },
    ]);
    expect(own.accepted).toBe(1);
    expect(own.rejected[0]!.error).toContain("agent reports only");
  });

  it("takes samples while the reconciler works on the same endpoint, without deadlocks or lost health", async () => {
    const { gpuType } = await fleet(2);
    const t = await makeTenant(16);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const e = await makeReady((await createEndpoint(asT, spec(gpuType, { replicas: 2, gpus_per_replica: 1 }))).id, asT);
    const replicas = e.replicas.filter((r) => r.status === "ready");
    const base = Date.now() - 60_000;
    const rounds = Array.from({ length: 8 }, (_, round) =>
      Promise.all([
        ...replicas.map((r, k) =>
          ingestEndpointMetrics(asT, e.id, [healthy(r.id, { recorded_at: new Date(base + round * 1000 + k).toISOString() })]),
        ),
        reconcileEndpoints({ endpointId: e.id }),
        reconcileEndpoints(),
      ]),
    );
    const settled = await Promise.allSettled(rounds);
    expect(settled.filter((x) => x.status === "rejected")).toEqual([]);
    const now = await getEndpointOrThrow(asT.principal, e.id);
    expect(now.status).toBe("ready");
    expect(now.replicas.filter((r) => r.status === "ready")).toHaveLength(2);
    const [{ n }] = await db().$queryRaw<
      [{ n: number }]
    >`SELECT count(*)::int AS n FROM endpoint_metrics WHERE endpoint_id = ${e.id}::uuid AND recorded_at >= ${new Date(base)} AND recorded_at < ${new Date(base + 10_000)}`;
    expect(n).toBe(16);
  });

  it("computes SLA over a window from real rollups, and fires an sla_breach alert its tenant sees", async () => {
    const { cluster, gpuType } = await fleet(1);
    const t = await makeTenant(16);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const e = await makeReady(
      (await createEndpoint(asT, spec(gpuType, { replicas: 1, sla_availability_pct: 99, sla_p95_ms: 300 }))).id,
      asT,
    );
    // the endpoint has been ready for an hour; samples cover only its last 30 minutes, and for the
    // 30 before them the reconciler saw no ready replica (silent minutes: down)
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    await pool().query(`UPDATE endpoints SET created_at = $2 WHERE id = $1`, [e.id, new Date(minute - 61 * 60_000)]);
    await pool().query(`UPDATE endpoint_events SET created_at = $2 WHERE endpoint_id = $1`, [e.id, new Date(minute - 60 * 60_000)]);
    await pool().query(
      `INSERT INTO endpoint_observations_1m (endpoint_id, bucket, observations, min_ready, max_ready, desired)
       SELECT $1, b, 12, 0, 0, 1 FROM generate_series($2::timestamptz, $3::timestamptz, interval '1 minute') b`,
      // (from the minute before the hour: a silent minute right after an unobserved one is not counted down yet)
      [e.id, new Date(minute - 61 * 60_000), new Date(minute - 31 * 60_000)],
    );
    await ingestEndpointMetrics(
      asT,
      e.id,
      Array.from({ length: 30 }, (_, i) =>
        healthy(e.replicas[0]!.id, {
          recorded_at: new Date(minute - (30 - i) * 60_000 + 5_000).toISOString(),
          p95_ms: i < 3 ? 900 : 250,
          p99_ms: 1200,
        }),
      ),
    );
    const sla = await endpointSla(asT.principal, e.id, {
      from: new Date(minute - 60 * 60_000).toISOString(),
      to: new Date(minute).toISOString(),
    });
    expect(sla).toMatchObject({
      minutes_expected: 60,
      minutes_available: 30,
      minutes_down: 30,
      minutes_no_data: 0,
      availability_pct: 50,
      minutes_with_traffic: 30,
      p95_worst_ms: 900,
      compliant: { availability: false, p95: false },
    });
    expect(sla.p95_compliance_pct).toBeCloseTo(90, 3);
    expect(sla.error_budget).toMatchObject({ allowed_minutes: 0.6, used_minutes: 30, remaining_pct: 0, overspent_minutes: 29.4 });
    // a window is at most 92 days, whichever end was left to its default
    expect(await codeAndFieldOf(endpointSla(asT.principal, e.id, { from: "2020-01-01T00:00:00Z" }))).toBe("validation_failed:from");

    const rule = await createAlertRule(systemActor, {
      name: unique("sla"),
      rule_type: "sla_breach",
      cluster_id: cluster.id,
      window_s: 3600,
      severity: "critical",
      enabled: true,
      notify: false,
      auto_remediate: false,
    });
    // only this rule: alert evaluation of the whole test database belongs to the alerts tests
    await evaluateAlerts({ ruleIds: [rule.id] });
    const fired = await db().alertEvent.findFirst({ where: { ruleId: rule.id, subjectId: e.id, status: "firing" } });
    expect(fired).toMatchObject({
      tenantId: t.id,
      subjectType: "endpoint",
      message: expect.stringMatching(
        /availability (49|5\d)\.\d\d % < 99 % \(\d+\.\d of \d+\.\d min down\); p95 met the 300 ms target in only 9\d(\.\d)? % of minutes/,
      ),
    });
  });

  it("bills replica GPU time once: accruals and the final segment tile the replica's life; invoiced on an endpoint line", async () => {
    const { gpuType } = await fleet(1);
    const t = await makeTenant(16);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const e = await createEndpoint(asT, spec(gpuType, { replicas: 1, gpus_per_replica: 2 }));
    const r = e.replicas[0]!;
    // the replica has run for two hours
    await pool().query(`UPDATE endpoint_replicas SET started_at = now() - interval '2 hours' WHERE id = $1`, [r.id]);
    // not billed yet, but counted as running cost: 2 GPUs × 2 h at the price of any type without its own ('*')
    const [{ rate }] = await db().$queryRaw<
      [{ rate: number }]
    >`SELECT cents_per_hour AS rate FROM gpu_rates WHERE gpu_type = '*' AND effective_from <= now() ORDER BY effective_from DESC LIMIT 1`;
    const running = (await tenantMonthSpend(t.id)).accruing_cents;
    expect(running).toBeGreaterThanOrEqual(4 * rate);
    expect(running).toBeLessThan(4 * rate + 5);
    await Promise.all([accrueRunningUsage({ tenantId: t.id }), accrueRunningUsage({ tenantId: t.id })]);
    expect((await tenantMonthSpend(t.id)).accruing_cents).toBeLessThan(5);
    await deleteEndpoint(asT, e.id);
    const usage = await db().usageEvent.findMany({ where: { replicaId: r.id }, orderBy: { startedAt: "asc" } });
    // racing meters may each add a segment, never the same seconds: the segments tile the replica's life
    expect(usage.at(-1)!.kind).toBe("final");
    expect(usage.filter((u) => u.kind === "final")).toHaveLength(1);
    const { startedAt } = await db().endpointReplica.findUniqueOrThrow({ where: { id: r.id } });
    expect(usage[0]!.startedAt.getTime()).toBe(startedAt.getTime());
    for (let i = 1; i < usage.length; i++) expect(usage[i]!.startedAt.getTime()).toBe(usage[i - 1]!.endedAt.getTime());
    const total = usage.reduce((s, u) => s + Number(u.gpuSeconds), 0);
    expect(total).toBeGreaterThanOrEqual(2 * 7200);
    expect(total).toBeLessThan(2 * 7200 + 120);
    expect(usage.every((u) => u.endpointId === e.id && u.jobId === null)).toBe(true);
    // the database refuses a second bill for the same seconds
    await expect(
      pool().query(
        `INSERT INTO usage_events (tenant_id, replica_id, endpoint_id, attempt, kind, settlement, gpu_type, gpu_count, started_at, ended_at, gpu_seconds, cents_per_hour, amount_cents)
         VALUES ($1, $2, $3, 1, 'accrual', 'invoice', $4, 2, now() - interval '90 minutes', now() - interval '80 minutes', 1200, 0, 0)`,
        [t.id, r.id, e.id, gpuType],
      ),
    ).rejects.toMatchObject({ code: "23P01" });
    const inv = await generateInvoice(operator, t.id, { period_start: new Date(Date.now() - 3 * 3_600_000).toISOString() });
    expect(inv.lines).toHaveLength(1);
    expect(inv.lines[0]).toMatchObject({
      endpointId: e.id,
      jobId: null,
      gpuSeconds: BigInt(total),
      description: expect.stringContaining(`Endpoint ${e.name}`),
    });
    // and a replica segment naming another endpoint, or a job too
    await expect(
      pool().query(
        `INSERT INTO usage_events (tenant_id, replica_id, endpoint_id, attempt, kind, settlement, gpu_type, gpu_count, started_at, ended_at, gpu_seconds, cents_per_hour, amount_cents)
         VALUES ($1, $2, $4, 1, 'accrual', 'invoice', $3, 2, now() + interval '1 day', now() + interval '2 days', 1, 0, 0)`,
        [t.id, r.id, gpuType, (await createEndpoint(asT, spec(gpuType, { replicas: 1, gpus_per_replica: 1 }))).id],
      ),
    ).rejects.toMatchObject({ code: "23503" });
    await expect(
      pool().query(
        `INSERT INTO usage_events (tenant_id, job_id, replica_id, endpoint_id, attempt, kind, settlement, gpu_type, gpu_count, started_at, ended_at, gpu_seconds, cents_per_hour, amount_cents)
         VALUES ($1, $5, $2, $3, 1, 'accrual', 'invoice', $4, 2, now() + interval '1 day', now() + interval '2 days', 1, 0, 0)`,
        [t.id, r.id, e.id, gpuType, (await submitJob(asT, { name: "j", gpu_count: 1, gpu_type: gpuType, priority: 5, max_retries: 0 })).id],
      ),
    ).rejects.toMatchObject({ code: "23514" });
  });

  it("charges a prepaid balance for replica time; at zero no new replica is placed, past the grace replicas stop, funds bring them back", async () => {
    const { gpuType } = await fleet(1);
    const t = await createTenant(systemActor, { name: unique("prepaid"), gpu_quota: 8, billing_email: null, billing_mode: "prepaid" });
    await depositFunds(systemActor, t.id, 100, "test deposit");
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const e = await createEndpoint(asT, spec(gpuType, { replicas: 1, gpus_per_replica: 1 }));
    // the replica has run for an hour: more than the $1 deposit at any list price
    await pool().query(`UPDATE endpoint_replicas SET started_at = now() - interval '1 hour' WHERE endpoint_id = $1`, [e.id]);
    await makeReady(e.id, asT);
    await accrueRunningUsage({ tenantId: t.id });
    const charged = await db().ledgerEntry.findMany({ where: { tenantId: t.id, kind: "charge" } });
    expect(charged).toHaveLength(1);
    expect(charged[0]!.description).toContain("endpoint replica");
    // marks it at zero (a grace of 0 would also stop every other file's prepaid tenant at zero)
    await enforcePrepaidBalances(3600);
    // zero since longer than the grace period (PREPAID_GRACE_S)
    await pool().query(`UPDATE tenants SET balance_exhausted_at = now() - interval '1 day' WHERE id = $1`, [t.id]);
    await reconcileEndpoints({ endpointId: e.id });
    let now = await getEndpointOrThrow(asT.principal, e.id);
    expect(now.replicas.filter((r) => r.status !== "stopped")).toHaveLength(0);
    expect(now.replicas[0]!.stopReason).toContain("prepaid balance");
    expect(now.statusReason).toContain("not placing: prepaid balance used up");
    await depositFunds(systemActor, t.id, 100_000, "top-up");
    await enforcePrepaidBalances(3600);
    await reconcileEndpoints({ endpointId: e.id });
    now = await getEndpointOrThrow(asT.principal, e.id);
    expect(now.replicas.filter((r) => r.status === "starting")).toHaveLength(1);
  });
});
