import { describe, expect, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { generateInvoice } from "@/lib/billing/generate-invoice";
import { depositFunds } from "@/lib/billing/ledger";
import { accrueRunningUsage } from "@/lib/billing/meter";
import { monthSpendByTenant, tenantMonthSpend } from "@/lib/billing/month-spend";
import { currentMonth } from "@/lib/billing/money";
import { billingSummary, tenantBillingTable } from "@/lib/billing/usage";
import { db, pool } from "@/lib/db/client";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { cancelJob } from "@/lib/jobs/cancel-job";
import { finishJob } from "@/lib/jobs/finish-job";
import { jobFitContext } from "@/lib/jobs/queries";
import { submitJob } from "@/lib/jobs/submit-job";
import { tenantOverview } from "@/lib/platform/overview";
import { createPod } from "@/lib/pods/create-pod";
import { createPodBody } from "@/lib/pods/schemas";
import { createReservation } from "@/lib/reservations/create-reservation";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { createTenant } from "@/lib/tenants/create-tenant";
import { tenantDetail, tenantFigures } from "@/lib/tenants/queries";
import { actorFor, agentPrincipal, asTenantAdmin, availableFleet, operatorPrincipal, placementOf, unique } from "../support/fixtures";

// The console's figures, one definition each (issue 32): this month's money in two parts that add
// up, that the meter and the invoice then bill to the cent; and "GPUs in use" as the quota counts
// it, with a split whose parts add up to it.

const RATE = 360; // cents per GPU-hour: a cent per 10 GPU-seconds
const operator = actorFor(operatorPrincipal);

async function pricedFleet(nodes: number, gpusPerNode: number) {
  const fleet = await availableFleet(nodes, gpusPerNode, "MS");
  await db().gpuRate.create({
    data: { gpuType: fleet.gpuType, centsPerHour: RATE, effectiveFrom: new Date("2020-01-01"), createdBy: "test" },
  });
  return fleet;
}

/** A job placed now whose run (and any segment already billed) is moved `secondsAgo` into the past. */
async function running(tenantId: string, gpuType: string, gpus: number, secondsAgo: number) {
  const job = await submitJob(asTenantAdmin(tenantId), {
    name: unique("job"),
    gpu_count: gpus,
    gpu_type: gpuType,
    priority: 1,
    max_retries: 0,
  });
  await runSchedulerCycle("figures");
  await pool().query(`UPDATE jobs SET started_at = started_at - make_interval(secs => $2::int) WHERE id = $1 AND status = 'running'`, [
    job.id,
    secondsAgo,
  ]);
  expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("running");
  return job;
}

describe("this month's money", () => {
  it("billed and accruing add up to the total; the meter bills exactly the accruing part and an invoice for the month holds the total", async () => {
    const { gpuType, cluster } = await pricedFleet(2, 8);
    const tenant = await createTenant(systemActor, { name: unique("Month Co"), gpu_quota: 16, billing_email: null });
    const prepaid = await createTenant(systemActor, {
      name: unique("Prepaid Co"),
      gpu_quota: 16,
      billing_email: null,
      billing_mode: "prepaid",
    });
    await depositFunds(systemActor, prepaid.id, 100_000, "test deposit");

    // the seeded month: a run that finished (billed), one billed an hour ago and still running (both
    // parts), one not billed at all yet (accruing), the prepaid tenant's running work; and usage of
    // last month, which is not this month's
    const finished = await running(tenant.id, gpuType, 1, 900);
    await finishJob(actorFor(agentPrincipal(cluster.id)), finished.id, {
      status: "completed",
      exit_code: 0,
      ...(await placementOf(finished.id)),
    });
    await running(tenant.id, gpuType, 2, 7200);
    await accrueRunningUsage({ tenantId: tenant.id, until: new Date(Date.now() - 3_600_000), prepaidEveryS: 0, invoiceEveryS: 0 });
    await running(tenant.id, gpuType, 3, 1800);
    await running(prepaid.id, gpuType, 1, 600);
    const lastMonth = new Date(currentMonth(new Date()).start.getTime() - 86_400_000);
    await db().usageEvent.create({
      data: {
        tenantId: tenant.id,
        jobId: finished.id,
        attempt: 9,
        kind: "final",
        settlement: "invoice",
        gpuType,
        gpuCount: 1,
        startedAt: new Date(lastMonth.getTime() - 3_600_000),
        endedAt: lastMonth,
        gpuSeconds: 3600n,
        centsPerHour: RATE,
        amountCents: 360n,
      },
    });

    const at = new Date();
    const month = await tenantMonthSpend(tenant.id, at);
    expect(month.total_cents).toBe(month.billed_cents + month.accruing_cents);
    expect(month.billed_cents).toBeGreaterThan(0);
    expect(month.accruing_cents).toBeGreaterThan(0);
    // billed: every segment that ended this month, and nothing of last month
    const segments = await db().usageEvent.aggregate({
      where: { tenantId: tenant.id, endedAt: { gt: currentMonth(at).start, lte: at } },
      _sum: { amountCents: true },
    });
    expect(month.billed_cents).toBe(Number(segments._sum.amountCents));
    // accruing: 2 GPUs for an hour since their segment, 3 GPUs for half an hour, at a cent per 10 GPU-seconds (plus the seconds the test took)
    expect(month.accruing_cents).toBeGreaterThanOrEqual(720 + 540);
    expect(month.accruing_cents).toBeLessThan(720 + 540 + 60);
    expect(month.accruing_cents_per_hour).toBe(5 * RATE);

    // the same snapshot, whole fleet: the parts add up for everyone and for all together
    const all = await monthSpendByTenant(at);
    for (const m of all.byTenant.values()) expect(m.total_cents).toBe(m.billed_cents + m.accruing_cents);
    const sum = (k: "billed_cents" | "accruing_cents") => [...all.byTenant.values()].reduce((s, m) => s + m[k], 0);
    expect(all.all).toMatchObject({ billed_cents: sum("billed_cents"), accruing_cents: sum("accruing_cents") });
    expect(all.byTenant.get(tenant.id)).toEqual(month);
    expect((await tenantMonthSpend(prepaid.id, at)).accruing_cents).toBeGreaterThanOrEqual(60);

    // the meter, billing up to the same instant, bills exactly what was accruing: the total stays, all of it billed
    await accrueRunningUsage({ tenantId: tenant.id, until: at, prepaidEveryS: 0, invoiceEveryS: 0 });
    const afterMeter = await tenantMonthSpend(tenant.id, at);
    expect(afterMeter).toMatchObject({ billed_cents: month.total_cents, accruing_cents: 0, total_cents: month.total_cents });

    // an invoice for the month up to that instant holds the total, to the cent
    const invoice = await generateInvoice(
      operator,
      tenant.id,
      { period_start: currentMonth(at).start.toISOString(), period_end: at.toISOString() },
      { now: at },
    );
    expect(Number(invoice.amountCents)).toBe(month.total_cents);
  });

  it("every page's source and the API agree: the operator's card and rows, the tenant's home, billing table and GET /api/tenants/{id}", async () => {
    const { gpuType } = await pricedFleet(1, 4);
    const tenant = await createTenant(systemActor, { name: unique("Agree Co"), gpu_quota: 4, billing_email: null });
    await running(tenant.id, gpuType, 2, 1200);
    const [rows, summary, home, detail, own] = await Promise.all([
      tenantBillingTable(),
      billingSummary(),
      tenantOverview({ kind: "tenant", tenantId: tenant.id, role: "tenant_admin", label: "test" }),
      tenantDetail(operatorPrincipal, tenant.id),
      tenantMonthSpend(tenant.id),
    ]);
    const row = rows.find((r) => r.id === tenant.id)!;
    // the run accrues by the second between the reads: the parts agree within the seconds between them
    for (const accruing of [row.accruingCents, home.month.accruing_cents, detail.month.accruing_cents])
      expect(Math.abs(accruing - own.accruing_cents)).toBeLessThanOrEqual(2);
    for (const billed of [row.billedCents, home.month.billed_cents, detail.month.billed_cents]) expect(billed).toBe(own.billed_cents);
    expect(summary.revenue_month_cents).toBe(summary.revenue_month_billed_cents + summary.revenue_month_accruing_cents);
    expect(detail.month.total_cents).toBe(detail.month.billed_cents + detail.month.accruing_cents);
  });
});

describe("GPUs in use", () => {
  it("is everything that holds a GPU, as the quota counts it, and the split adds up to it on every page's source", async () => {
    const { gpuType, nodes } = await availableFleet(4, 2, "GU");
    const tenant = await createTenant(systemActor, { name: unique("Holder Co"), gpu_quota: 32, billing_email: null });
    const admin = asTenantAdmin(tenant.id);
    const now = Date.now();
    // a whole node reserved now (2 GPUs), with a job inside it: the node's GPUs count once
    const reservation = await createReservation(admin, {
      gpu_type: gpuType,
      node_count: 1,
      starts_at: new Date(now).toISOString(),
      ends_at: new Date(now + 3_600_000).toISOString(),
    });
    await submitJob(admin, {
      name: unique("inside"),
      gpu_count: 1,
      gpu_type: gpuType,
      priority: 1,
      max_retries: 0,
      reservation_id: reservation.id,
    });
    // on demand: a job of 2 GPUs, an endpoint replica of 1, a pod of 1
    await submitJob(admin, { name: unique("on-demand"), gpu_count: 2, gpu_type: gpuType, priority: 1, max_retries: 0 });
    await createEndpoint(admin, {
      name: unique("ep"),
      model: "m",
      gpu_type: gpuType,
      gpus_per_replica: 1,
      replicas: 1,
      autoscale_metric: "none",
      cooldown_s: 300,
    });
    await createPod(admin, createPodBody.parse({ name: unique("pod"), gpu_type: gpuType, gpu_count: 1, image: "runpod/pytorch:2.4.0" }));
    await runSchedulerCycle("gpus-in-use");
    await runSchedulerCycle("gpus-in-use-2");

    const figures = await tenantFigures(tenant.id);
    const { rows } = await pool().query<{ in_use: number }>(`SELECT in_use FROM tenant_gpus_in_use(ARRAY[$1::uuid])`, [tenant.id]);
    expect(figures.gpu_in_use).toBe(rows[0]!.in_use);
    expect(figures.gpu_in_use_by).toEqual({ jobs: 2, endpoint_replicas: 1, pods: 1, reserved: 2 });
    const parts = Object.values(figures.gpu_in_use_by).reduce((s, n) => s + n, 0);
    expect(parts).toBe(figures.gpu_in_use);
    // the GPUs held, counted from the GPUs themselves: the work inside the reservation sits on its node
    const held = await db().gpu.count({
      where: {
        nodeId: { in: nodes.map((n) => n.node.id) },
        OR: [{ allocatedJobId: { not: null } }, { allocatedReplicaId: { not: null } }, { allocatedPodId: { not: null } }],
      },
    });
    expect(held).toBe(5);
    // the jobs page's fit, the home page and the API read the same figures
    expect((await jobFitContext(tenant.id)).inUse).toBe(figures.gpu_in_use);
    expect((await tenantOverview({ kind: "tenant", tenantId: tenant.id, role: "tenant_admin", label: "test" })).figures).toEqual(figures);
    expect(await tenantDetail(operatorPrincipal, tenant.id)).toMatchObject({
      gpu_in_use: figures.gpu_in_use,
      gpu_in_use_by: figures.gpu_in_use_by,
    });
  });
  it("counts a tenant's running jobs, not its history, and agrees with counting every GPU for every tenant", async () => {
    const { gpuType } = await availableFleet(2, 4, "GH");
    const tenant = await createTenant(systemActor, { name: unique("History Co"), gpu_quota: 8, billing_email: null });
    const admin = asTenantAdmin(tenant.id);
    const submit = (gpus: number) =>
      submitJob(admin, { name: unique("h"), gpu_count: gpus, gpu_type: gpuType, priority: 1, max_retries: 0 });
    const one = await submit(1);
    await submit(2);
    const four = await submit(4);
    await runSchedulerCycle("gpus-in-use-history");
    await cancelJob(systemActor, one.id);
    await finishJob(systemActor, four.id, { status: "cancelled" });
    const still = await submit(1);
    await runSchedulerCycle("gpus-in-use-history-2");
    expect((await db().job.findUniqueOrThrow({ where: { id: still.id } })).status).toBe("running");
    const own = await pool().query<{ in_use: number }>(`SELECT in_use FROM tenant_gpus_in_use(ARRAY[$1::uuid])`, [tenant.id]);
    expect(own.rows[0]!.in_use).toBe(3);
    // every tenant the shared database holds now (reservations, replicas, pods and bursts of the
    // other tests among them), in one snapshot: the definition by running jobs against counting
    // each GPU's holder, as the function did before
    const { rows } = await pool().query<{ tenant_id: string; in_use: number | null; per_gpu: number | null }>(
      `WITH every AS (SELECT array_agg(id) AS ids FROM tenants),
       per_gpu AS (
         SELECT x.tenant_id, sum(x.n)::int AS n FROM (
           SELECT j.tenant_id, 1 AS n FROM gpus g JOIN jobs j ON j.id = g.allocated_job_id
            WHERE NOT EXISTS (SELECT 1 FROM reservation_nodes rn WHERE rn.node_id = g.node_id AND rn.tenant_id = j.tenant_id AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now())
           UNION ALL
           SELECT r.tenant_id, 1 FROM gpus g JOIN endpoint_replicas r ON r.id = g.allocated_replica_id
            WHERE NOT EXISTS (SELECT 1 FROM reservation_nodes rn WHERE rn.node_id = g.node_id AND rn.tenant_id = r.tenant_id AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now())
           UNION ALL
           SELECT p.tenant_id, 1 FROM gpus g JOIN pods p ON p.id = g.allocated_pod_id
           UNION ALL
           SELECT rn.tenant_id, rn.gpu_count FROM reservation_nodes rn WHERE rn.live AND rn.starts_at <= now() AND rn.ends_at > now()
         ) x GROUP BY x.tenant_id
       )
       SELECT COALESCE(u.tenant_id, p.tenant_id) AS tenant_id, u.in_use, p.n AS per_gpu
         FROM tenant_gpus_in_use((SELECT ids FROM every)) u FULL JOIN per_gpu p ON p.tenant_id = u.tenant_id`,
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.filter((r) => r.in_use !== r.per_gpu)).toEqual([]);
    expect(rows.find((r) => r.tenant_id === tenant.id)?.in_use).toBe(3);
  });
  it("never loses a GPU from under the work that holds it: deleting it, or its node, is refused and changes nothing", async () => {
    const { gpuType, nodes } = await availableFleet(1, 2, "GD");
    const tenant = await createTenant(systemActor, { name: unique("Holding Co"), gpu_quota: 4, billing_email: null });
    const job = await submitJob(asTenantAdmin(tenant.id), {
      name: unique("held"),
      gpu_count: 2,
      gpu_type: gpuType,
      priority: 1,
      max_retries: 0,
    });
    await runSchedulerCycle("gpus-delete-guard");
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("running");
    const node = nodes[0]!.node.id;
    const held = await db().gpu.findFirstOrThrow({ where: { nodeId: node, allocatedJobId: job.id } });
    await expect(pool().query("DELETE FROM gpus WHERE id = $1", [held.id])).rejects.toThrow(/is held by .* cannot be removed/);
    await expect(pool().query("DELETE FROM nodes WHERE id = $1", [node])).rejects.toThrow(/is held by .* cannot be removed/);
    expect(await db().gpu.count({ where: { nodeId: node, allocatedJobId: job.id } })).toBe(2);
    expect(await db().node.count({ where: { id: node } })).toBe(1);
    // once its work has ended, the GPU is free and may go
    await finishJob(systemActor, job.id, { status: "cancelled" });
    await expect(pool().query("DELETE FROM gpus WHERE id = $1", [held.id])).resolves.toMatchObject({ rowCount: 1 });
  });
});
