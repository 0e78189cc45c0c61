import http from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import Stripe from "stripe";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { describeEntries } from "@/lib/audit/list-audit";
import { generateInvoice } from "@/lib/billing/generate-invoice";
import { invoiceJson } from "@/lib/billing/invoice-json";
import { invoiceLastMonth } from "@/lib/billing/invoice-last-month";
import { payInvoice } from "@/lib/billing/pay-invoice";
import { refundInvoice } from "@/lib/billing/refund-invoice";
import { voidInvoice } from "@/lib/billing/void-invoice";
import { balanceOf, depositFunds, listTransactions } from "@/lib/billing/ledger";
import { accrueRunningUsage, enforcePrepaidBalances } from "@/lib/billing/meter";
import { segmentAmountCents } from "@/lib/billing/money";
import { setRate } from "@/lib/billing/rates";
import { handleStripeWebhook } from "@/lib/billing/stripe-webhook";
import { db, pool } from "@/lib/db/client";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { finishJob } from "@/lib/jobs/finish-job";
import { submitJob } from "@/lib/jobs/submit-job";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { createTenant } from "@/lib/tenants/create-tenant";
import { systemActor } from "@/lib/auth/principal";
import {
  actorFor,
  agentPrincipal,
  inventory,
  makeCluster,
  operatorPrincipal,
  placementOf,
  tenantAdminPrincipal,
  unique,
} from "../support/fixtures";
import { codeOf } from "../support/outcomes";

const operator = actorFor(operatorPrincipal);
const RATE = 360; // cents per GPU-hour: one cent per 10 GPU-seconds

/** A cluster of a GPU type of its own with a rate in force since long ago, and a tenant. */
async function world(opts: { nodes?: number; mode?: "invoice" | "prepaid"; quota?: number } = {}) {
  const cluster = await makeCluster();
  const gpuType = unique("B").replace(/-/g, "").slice(0, 12).toUpperCase();
  await db().gpuRate.create({ data: { gpuType, centsPerHour: RATE, effectiveFrom: new Date("2020-01-01"), createdBy: "test" } });
  for (let i = 0; i < (opts.nodes ?? 2); i++) {
    const r = await registerNode(actorFor(agentPrincipal(cluster.id)), { hostname: unique("n"), gpus: inventory(8, gpuType) });
    await recordHeartbeat(actorFor(agentPrincipal(cluster.id)), r.node.id, {});
  }
  const tenant = await createTenant(systemActor, {
    name: unique("tenant"),
    gpu_quota: opts.quota ?? 64,
    billing_email: null,
    billing_mode: opts.mode ?? "invoice",
  });
  return { cluster, gpuType, tenant, asTenant: actorFor(tenantAdminPrincipal(tenant.id)) };
}

/** Submits and starts a job, then moves its start `secondsAgo` into the past (as if it had been running). */
async function runningJob(w: Awaited<ReturnType<typeof world>>, gpus: number, secondsAgo: number) {
  const job = await submitJob(w.asTenant, { name: unique("job"), gpu_count: gpus, gpu_type: w.gpuType, priority: 1, max_retries: 0 });
  await runSchedulerCycle("test");
  await pool().query(`UPDATE jobs SET started_at = started_at - make_interval(secs => $2::int) WHERE id = $1 AND status = 'running'`, [
    job.id,
    secondsAgo,
  ]);
  const j = await db().job.findUniqueOrThrow({ where: { id: job.id } });
  expect(j.status).toBe("running");
  return j;
}

const usageOf = (jobId: string) => db().usageEvent.findMany({ where: { jobId }, orderBy: { startedAt: "asc" } });

describe("usage", () => {
  it("a finished run is billed once: its GPU-seconds at the rate in force, rounded once", async () => {
    const w = await world();
    const job = await runningJob(w, 3, 100);
    await finishJob(actorFor(agentPrincipal(w.cluster.id)), job.id, { status: "completed", exit_code: 0, ...(await placementOf(job.id)) });
    const [u, ...rest] = await usageOf(job.id);
    expect(rest).toEqual([]);
    expect(u).toMatchObject({ kind: "final", attempt: 1, gpuCount: 3, gpuType: w.gpuType, centsPerHour: RATE, settlement: "invoice" });
    const seconds = (u!.endedAt.getTime() - u!.startedAt.getTime()) / 1000;
    expect(seconds).toBeGreaterThanOrEqual(100);
    expect(Number(u!.gpuSeconds)).toBe(Math.round(seconds * 3));
    expect(Number(u!.amountCents)).toBe(segmentAmountCents(Number(u!.gpuSeconds), RATE));
  });

  it("running work accrues in contiguous segments; the database refuses a second billing of any second", async () => {
    const w = await world();
    const job = await runningJob(w, 2, 600);
    await accrueRunningUsage({ tenantId: w.tenant.id, invoiceEveryS: 0 });
    await pool().query(`UPDATE usage_events SET started_at = started_at, ended_at = ended_at WHERE job_id = $1`, [job.id]);
    await accrueRunningUsage({ tenantId: w.tenant.id, invoiceEveryS: 0 });
    // a node lost under it: requeued, its run ends and is billed; the next run is a new attempt
    await pool().query(
      `BEGIN; UPDATE jobs SET status = 'queued', started_at = NULL WHERE id = '${job.id}'; UPDATE gpus SET allocated_job_id = NULL WHERE allocated_job_id = '${job.id}'; COMMIT;`,
    );
    const segments = await usageOf(job.id);
    expect(segments.length).toBeGreaterThanOrEqual(2);
    expect(segments.at(-1)!.kind).toBe("final");
    expect(segments[0]!.startedAt.getTime()).toBe(job.startedAt!.getTime());
    for (let i = 1; i < segments.length; i++) expect(segments[i]!.startedAt.getTime()).toBe(segments[i - 1]!.endedAt.getTime());
    const overlap = pool().query(
      `INSERT INTO usage_events (tenant_id, job_id, attempt, kind, settlement, gpu_type, gpu_count, started_at, ended_at, gpu_seconds, cents_per_hour, amount_cents)
       VALUES ($1, $2, 1, 'accrual', 'invoice', 'X', 1, $3, $4, 1, 1, 0)`,
      [w.tenant.id, job.id, segments[0]!.startedAt, new Date(segments[0]!.startedAt.getTime() + 1000)],
    );
    await expect(overlap).rejects.toMatchObject({ code: "23P01" });
  });
});

describe("when runs end", () => {
  it("a run whose ending waited while the meter billed it ends after the meter's last second: its placement and its billing end together", async () => {
    const w = await world();
    const job = await runningJob(w, 2, 60);
    // the ending transaction begins (its now() is fixed from here) ...
    const ender = new pg.Client({ connectionString: inject("databaseUrl") });
    await ender.connect();
    await ender.query("BEGIN");
    await ender.query("SELECT now()");
    await new Promise((r) => setTimeout(r, 30));
    // ... while the meter, starting later, bills the still-running run up to its own time
    await accrueRunningUsage({ tenantId: w.tenant.id, invoiceEveryS: 0 });
    await ender.query(`UPDATE jobs SET status = 'completed', finished_at = now() WHERE id = $1`, [job.id]);
    await ender.query(`UPDATE gpus SET allocated_job_id = NULL WHERE allocated_job_id = $1`, [job.id]);
    await ender.query("COMMIT");
    await ender.end();

    const segments = await usageOf(job.id);
    const placement = await db().jobPlacement.findFirstOrThrow({ where: { jobId: job.id } });
    const last = segments.at(-1)!;
    expect(segments.map((x) => x.kind)).toEqual(["accrual", "final"]);
    expect(last.startedAt.getTime()).toBe(segments[0]!.endedAt.getTime());
    expect(last.endedAt.getTime()).toBeGreaterThan(last.startedAt.getTime());
    expect(placement.endedAt!.getTime()).toBe(last.endedAt.getTime());
  });
});

describe("rates", () => {
  it("a new rate applies from now on; what already ran keeps the rate in force when it ran", async () => {
    const w = await world();
    const job = await runningJob(w, 1, 600);
    const pause = () => new Promise((r) => setTimeout(r, 25));
    await accrueRunningUsage({ tenantId: w.tenant.id, invoiceEveryS: 0 });
    const rate = await setRate(operator, w.gpuType, 720);
    expect(rate.history.map((h) => h.cents_per_hour)).toEqual([720, RATE]);
    await pause();
    // this segment started before the change: still the old rate
    await accrueRunningUsage({ tenantId: w.tenant.id, invoiceEveryS: 0 });
    await pause();
    await finishJob(operator, job.id, { status: "completed" });
    const segs = await usageOf(job.id);
    expect(segs.map((s) => s.centsPerHour)).toEqual([RATE, RATE, 720]);
    expect(await codeOf(setRate(w.asTenant, w.gpuType, 1))).toBe("forbidden");
  });
});

describe("invoices", () => {
  it("groups lines by GPU type and job, totals them, never bills usage twice, refuses an empty period", async () => {
    const w = await world();
    const a = await runningJob(w, 2, 300);
    const b = await runningJob(w, 1, 120);
    await finishJob(operator, a.id, { status: "completed", exit_code: 0 });
    const from = new Date(Date.now() - 86_400_000).toISOString();
    const inv = await generateInvoice(operator, w.tenant.id, { period_start: from });
    const json = invoiceJson(inv);
    // the running job was billed up to now and is on the invoice
    expect(json.lines).toHaveLength(1);
    expect(new Set(json.lines[0]!.jobs.map((j) => j.job_id))).toEqual(new Set([a.id, b.id]));
    expect(json.amount_cents).toBe(json.lines.reduce((s, l) => s + l.amount_cents, 0));
    const billed = await pool().query<{ s: string }>(`SELECT sum(amount_cents)::text AS s FROM usage_events WHERE invoice_id = $1`, [
      inv.id,
    ]);
    expect(Number(billed.rows[0]!.s)).toBe(json.amount_cents);
    expect(json.payment_url).toContain(`/dashboard/billing/invoices/${inv.id}`);
    expect(json.number).toMatch(/^INV-\d{6}$/);
    // the same period again, and a period with nothing new, change nothing
    expect(await codeOf(generateInvoice(operator, w.tenant.id, { period_start: from, period_end: inv.periodEnd.toISOString() }))).toBe(
      "conflict",
    );
    expect(
      await codeOf(generateInvoice(operator, w.tenant.id, { period_start: "2020-01-01T00:00:00Z", period_end: "2020-02-01T00:00:00Z" })),
    ).toBe("nothing_to_invoice");
    // a void invoice gives its usage back, to be invoiced again
    await voidInvoice(operator, inv.id);
    expect(await db().usageEvent.count({ where: { invoiceId: inv.id } })).toBe(0);
    const again = await generateInvoice(operator, w.tenant.id, { period_start: from, period_end: inv.periodEnd.toISOString() });
    expect(Number(again.amountCents)).toBe(json.amount_cents);
    expect(again.number).toBeGreaterThan(inv.number);
    expect(await codeOf(generateInvoice(actorFor(tenantAdminPrincipal(w.tenant.id)), w.tenant.id, {}))).toBe("forbidden");
  });

  it("the monthly run invoices last month once per tenant, however often it runs", async () => {
    const w = await world();
    const job = await submitJob(w.asTenant, { name: "january", gpu_count: 1, gpu_type: w.gpuType, priority: 9, max_retries: 0 });
    await finishJob(operator, job.id, { status: "cancelled" });
    // a run that ended in January 2021, billed then
    await pool().query(
      `INSERT INTO usage_events (tenant_id, job_id, attempt, kind, settlement, gpu_type, gpu_count, started_at, ended_at, gpu_seconds, cents_per_hour, amount_cents)
       VALUES ($1, $2, 1, 'final', 'invoice', $3, 1, '2021-01-10T00:00:00Z', '2021-01-10T01:00:00Z', 3600, $4::int, $4::bigint)`,
      [w.tenant.id, job.id, w.gpuType, RATE],
    );
    const at = new Date("2021-02-01T00:05:00Z");
    expect(await invoiceLastMonth(at, [w.tenant.id])).toEqual({ created: 1, nothing: 0, already: 0 });
    expect(await invoiceLastMonth(at, [w.tenant.id])).toEqual({ created: 0, nothing: 0, already: 1 });
    const [inv] = await db().invoice.findMany({ where: { tenantId: w.tenant.id } });
    expect(inv).toMatchObject({
      periodStart: new Date("2021-01-01T00:00:00Z"),
      periodEnd: new Date("2021-02-01T00:00:00Z"),
      amountCents: BigInt(RATE),
      createdBy: "monthly invoicing",
    });
    // the platform acting on its own is audited as the system, named for what it was doing
    const entries = await db().auditLog.findMany({ where: { targetId: inv!.id, action: "billing.invoice_created" } });
    expect(entries.map((e) => e.actorKind)).toEqual(["system"]);
    expect((await describeEntries(entries))[0]!.actorName).toBe("the platform (monthly invoicing)");
    expect(await invoiceLastMonth(new Date("2021-03-01T00:05:00Z"), [w.tenant.id])).toEqual({ created: 0, nothing: 1, already: 0 });
  });

  it("the database refuses an invoice whose total is not the sum of its lines", async () => {
    const w = await world();
    const c = await pool().connect();
    try {
      await c.query("BEGIN");
      await c.query(
        `INSERT INTO invoices (number, tenant_id, period_start, period_end, amount_cents, created_by) VALUES (999999, $1, now() - interval '1 day', now(), 100, 'test')`,
        [w.tenant.id],
      );
      await expect(c.query("COMMIT")).rejects.toMatchObject({ code: "23514" });
    } finally {
      c.release();
    }
  });

  it("parallel invoice runs: one invoice per tenant and period, numbers sequential without gaps", async () => {
    const worlds = await Promise.all([world(), world(), world()]);
    for (const w of worlds) await finishJob(operator, (await runningJob(w, 1, 60)).id, { status: "completed" });
    const period = { period_start: new Date(Date.now() - 3_600_000).toISOString(), period_end: new Date(Date.now() + 1000).toISOString() };
    await new Promise((r) => setTimeout(r, 1100));
    const results = await Promise.allSettled(worlds.flatMap((w) => [0, 1, 2].map(() => generateInvoice(operator, w.tenant.id, period))));
    const made = results
      .filter((r) => r.status === "fulfilled")
      .map((r) => (r as PromiseFulfilledResult<{ number: number; tenantId: string }>).value);
    expect(made).toHaveLength(3);
    expect(new Set(made.map((m) => m.tenantId)).size).toBe(3);
    expect(results.filter((r) => r.status === "rejected").every((r) => (r as PromiseRejectedResult).reason.code === "conflict")).toBe(true);
    const { rows } = await pool().query<{ n: number; min: number; max: number }>(
      `SELECT count(*)::int AS n, min(number) AS min, max(number) AS max FROM invoices`,
    );
    expect(rows[0]!.max - rows[0]!.min + 1).toBe(rows[0]!.n); // no gaps anywhere
  });

  it("money properties over random runs, accruals, invoices and payments", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({ op: fc.constant("start" as const), gpus: fc.integer({ min: 1, max: 4 }), ago: fc.integer({ min: 1, max: 7200 }) }),
            fc.record({ op: fc.constant("accrue" as const) }),
            fc.record({ op: fc.constant("finish" as const), pick: fc.nat() }),
            fc.record({ op: fc.constant("invoice" as const) }),
            fc.record({ op: fc.constant("pay" as const), pick: fc.nat() }),
          ),
          { minLength: 3, maxLength: 12 },
        ),
        async (ops) => {
          const w = await world({ nodes: 2, quota: 16 });
          const running: string[] = [];
          const jobs: string[] = [];
          for (const o of ops) {
            if (o.op === "start") {
              const free = await db().gpu.count({ where: { gpuType: w.gpuType, allocatedJobId: null } });
              if (free < o.gpus) continue;
              const j = await runningJob(w, o.gpus, o.ago);
              running.push(j.id);
              jobs.push(j.id);
            } else if (o.op === "accrue") {
              await accrueRunningUsage({ tenantId: w.tenant.id, invoiceEveryS: 0 });
            } else if (o.op === "finish" && running.length) {
              const [id] = running.splice(o.pick % running.length, 1);
              await finishJob(operator, id!, { status: "completed" });
            } else if (o.op === "invoice") {
              await generateInvoice(operator, w.tenant.id, {
                period_start: "2020-01-01T00:00:00Z",
                period_end: new Date().toISOString(),
              }).catch((e) => {
                if (!["nothing_to_invoice", "conflict"].includes(e.code)) throw e;
              });
            } else if (o.op === "pay") {
              const pending = await db().invoice.findMany({ where: { tenantId: w.tenant.id, status: "pending" } });
              if (pending.length) await payInvoice(operator, pending[o.pick % pending.length]!.id, { method: "bank", reference: "wire" });
            }
          }
          for (const id of running) await finishJob(operator, id, { status: "completed" });
          const events = await db().usageEvent.findMany({
            where: { tenantId: w.tenant.id },
            orderBy: [{ jobId: "asc" }, { startedAt: "asc" }],
          });
          const invoices = await db().invoice.findMany({ where: { tenantId: w.tenant.id }, include: { lines: true } });
          // every invoice's total is its lines; all lines together are exactly the invoiced usage
          for (const inv of invoices) expect(Number(inv.amountCents)).toBe(inv.lines.reduce((s, l) => s + Number(l.amountCents), 0));
          const lines = invoices.flatMap((i) => i.lines).reduce((s, l) => s + Number(l.amountCents), 0);
          expect(lines).toBe(events.filter((e) => e.invoiceId).reduce((s, e) => s + Number(e.amountCents), 0));
          // each run is covered from its start to its end, without gap or overlap, and ends with one final segment
          for (const id of jobs) {
            const job = await db().job.findUniqueOrThrow({ where: { id } });
            const segs = events.filter((e) => e.jobId === id);
            expect(segs[0]!.startedAt.getTime()).toBe(job.startedAt!.getTime());
            for (let i = 1; i < segs.length; i++) expect(segs[i]!.startedAt.getTime()).toBe(segs[i - 1]!.endedAt.getTime());
            expect(segs.filter((s) => s.kind === "final")).toHaveLength(1);
            expect(segs.at(-1)!.kind).toBe("final");
            for (const s of segs) expect(Number(s.amountCents)).toBe(segmentAmountCents(Number(s.gpuSeconds), RATE));
          }
        },
      ),
      { numRuns: 12 },
    );
  });
});

describe("prepaid balances", () => {
  it("no funds: work waits; funds: it runs and is charged every segment; at zero past the grace period it stops", async () => {
    const w = await world({ mode: "prepaid" });
    const job = await submitJob(w.asTenant, { name: "prepaid", gpu_count: 2, gpu_type: w.gpuType, priority: 1, max_retries: 0 });
    expect(job).toMatchObject({ status: "blocked", blockReason: "billing" });
    expect(await codeOf(depositFunds(w.asTenant, w.tenant.id, 1000))).toBe("forbidden");
    await depositFunds(operator, w.tenant.id, 500, "wire");
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("queued");
    await runSchedulerCycle("test");
    await pool().query(`UPDATE jobs SET started_at = started_at - interval '600 seconds' WHERE id = $1`, [job.id]);
    await accrueRunningUsage({ tenantId: w.tenant.id, prepaidEveryS: 0 });
    const [seg] = await usageOf(job.id);
    const charge = await db().ledgerEntry.findFirstOrThrow({ where: { usageEventId: seg!.id } });
    expect(Number(charge.amountCents)).toBe(-Number(seg!.amountCents));
    expect(await balanceOf(w.tenant.id)).toBe(500 - Number(seg!.amountCents)); // 2 GPUs × 600 s at 360 ¢/h = 120 ¢
    // spend the rest: 2 GPUs × 3 h more
    await pool().query(`UPDATE jobs SET started_at = started_at - interval '3 hours' WHERE id = $1`, [job.id]);
    await pool().query(
      `UPDATE usage_events SET started_at = started_at - interval '3 hours', ended_at = ended_at - interval '3 hours' WHERE job_id = $1`,
      [job.id],
    );
    await accrueRunningUsage({ tenantId: w.tenant.id, prepaidEveryS: 0 });
    expect(await balanceOf(w.tenant.id)).toBeLessThanOrEqual(0);
    const waiting = await submitJob(w.asTenant, { name: "next", gpu_count: 1, gpu_type: w.gpuType, priority: 1, max_retries: 0 });
    expect(waiting.blockReason).toBe("billing");
    // within the grace period the running job continues
    expect(await enforcePrepaidBalances(3600)).toMatchObject({ jobs_stopped: 0 });
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("running");
    await pool().query(`UPDATE tenants SET balance_exhausted_at = now() - interval '2 hours' WHERE id = $1`, [w.tenant.id]);
    expect(await enforcePrepaidBalances(3600)).toMatchObject({ jobs_stopped: 1 });
    const stopped = await db().job.findUniqueOrThrow({ where: { id: job.id } });
    expect(stopped).toMatchObject({ status: "cancelled" });
    expect(await db().gpu.count({ where: { allocatedJobId: job.id } })).toBe(0);
    // its last segment was charged too; the ledger is the balance, entry by entry
    const ledger = await listTransactions(operatorPrincipal, w.tenant.id, { limit: 50 });
    expect(ledger.data[0]!.balance_after_cents).toBe(await balanceOf(w.tenant.id));
    expect(ledger.data.filter((e) => e.kind === "charge").length).toBe((await usageOf(job.id)).filter((u) => u.amountCents > 0n).length);
    await expect(pool().query(`UPDATE ledger_entries SET amount_cents = 1000000 WHERE tenant_id = $1`, [w.tenant.id])).rejects.toThrow(
      /append-only/,
    );
  });

  it("pays an invoice from the balance once; racing payments never overdraw it", async () => {
    const w = await world();
    const a = await runningJob(w, 4, 3600);
    await finishJob(operator, a.id, { status: "completed" });
    const inv1 = await generateInvoice(operator, w.tenant.id, { period_start: "2020-01-01T00:00:00Z" });
    const b = await runningJob(w, 4, 3600);
    await finishJob(operator, b.id, { status: "completed" });
    await new Promise((r) => setTimeout(r, 5));
    const inv2 = await generateInvoice(operator, w.tenant.id, { period_start: inv1.periodEnd.toISOString() });
    await depositFunds(operator, w.tenant.id, Math.max(Number(inv1.amountCents), Number(inv2.amountCents)) + 10);
    const results = await Promise.allSettled([
      payInvoice(w.asTenant, inv1.id, { method: "balance" }),
      payInvoice(w.asTenant, inv2.id, { method: "balance" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: "conflict", details: [{ path: "method", message: "Insufficient balance" }] });
    expect(await balanceOf(w.tenant.id)).toBeGreaterThanOrEqual(0);
    const paid = (await db().invoice.findMany({ where: { tenantId: w.tenant.id, status: "paid" } }))[0]!;
    expect(await codeOf(payInvoice(w.asTenant, paid.id, { method: "balance" }))).toBe("invalid_transition");
    expect(await codeOf(payInvoice(w.asTenant, paid.id, { method: "bank", reference: "x" }))).toBe("forbidden");
    const other = await world();
    expect(await codeOf(payInvoice(other.asTenant, inv1.id, { method: "balance" }))).toBe("not_found");
  });
});

describe("refunds", () => {
  it("credit a paid invoice back to the balance, never more than was paid, even when operators race", async () => {
    const w = await world();
    await finishJob(operator, (await runningJob(w, 4, 3600)).id, { status: "completed" });
    const inv = await generateInvoice(operator, w.tenant.id, { period_start: "2020-01-01T00:00:00Z" });
    const amount = Number(inv.amountCents);
    expect(await codeOf(refundInvoice(operator, inv.id, { amount_cents: 1, reason: "early" }))).toBe("invalid_transition");
    await payInvoice(operator, inv.id, { method: "bank", reference: "wire" });
    expect(await codeOf(voidInvoice(operator, inv.id))).toBe("invalid_transition"); // paid: refund it instead
    expect(await codeOf(refundInvoice(w.asTenant, inv.id, { amount_cents: 1, reason: "self-service" }))).toBe("forbidden");
    const third = Math.floor(amount / 3) + 1;
    const results = await Promise.allSettled(
      [0, 1, 2, 3].map(() => refundInvoice(operator, inv.id, { amount_cents: third, reason: "SLA credit" })),
    );
    const ok = results.filter((r) => r.status === "fulfilled").length;
    expect(ok).toBe(2); // a third would pass the invoice's amount
    expect(await balanceOf(w.tenant.id)).toBe(2 * third);
    const entries = await listTransactions(w.asTenant.principal, w.tenant.id, { limit: 10 });
    expect(entries.data.map((e) => e.kind)).toEqual(["refund", "refund"]);
    expect(entries.data[0]!.description).toContain("SLA credit");
  });
});

describe("Stripe", () => {
  const secret = "whsec_test_" + "a".repeat(24);
  const stripe = new Stripe("sk_test_unused");
  const signed = (payload: string, s = secret) => stripe.webhooks.generateTestHeaderString({ payload, secret: s });
  const event = (id: string, type: string, object: Record<string, unknown>) =>
    JSON.stringify({ id, object: "event", type, api_version: "2025-01-01", created: 1, data: { object } });

  let server: http.Server;
  let apiBase = "";
  const requests: string[] = [];
  beforeAll(async () => {
    // stands in for api.stripe.com: the SDK talks to it like to Stripe
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        requests.push(`${req.method} ${req.url} ${decodeURIComponent(body)}`);
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: "cs_test_123",
            object: "checkout.session",
            url: "https://checkout.stripe.test/c/pay/cs_test_123",
            payment_status: "unpaid",
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    apiBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  it("gives an invoice a Checkout link carrying its id; the signed webhook marks it paid once", async () => {
    const w = await world();
    await finishJob(operator, (await runningJob(w, 1, 600)).id, { status: "completed" });
    const inv = await generateInvoice(
      operator,
      w.tenant.id,
      { period_start: "2020-01-01T00:00:00Z" },
      { stripe: { secretKey: "sk_test_x", apiBase } },
    );
    expect(inv.stripeUrl).toBe("https://checkout.stripe.test/c/pay/cs_test_123");
    expect(invoiceJson(inv).payment_url).toBe(inv.stripeUrl);
    const sent = requests.find((r) => r.startsWith("POST /v1/checkout/sessions"))!;
    expect(sent).toContain(`metadata[invoice_id]=${inv.id}`);
    expect(sent).toContain(`unit_amount]=${inv.amountCents}`);

    const cfg = { webhookSecret: secret };
    const payload = event(unique("evt"), "checkout.session.completed", {
      id: "cs_test_123",
      object: "checkout.session",
      payment_status: "paid",
      payment_intent: "pi_1",
      metadata: { invoice_id: inv.id },
    });
    expect(await handleStripeWebhook(payload, signed(payload), cfg)).toMatchObject({ outcome: "invoice_paid" });
    expect(await db().invoice.findUniqueOrThrow({ where: { id: inv.id } })).toMatchObject({
      status: "paid",
      paymentMethod: "stripe",
      paymentReference: "pi_1",
    });
    // the same event again changes nothing
    expect(await handleStripeWebhook(payload, signed(payload), cfg)).toMatchObject({ outcome: "duplicate" });
    // tampered, wrongly signed, unsigned: refused with the header named
    const tampered = payload.replace(inv.id, "00000000-0000-4000-8000-000000000000");
    expect(await handleStripeWebhook(tampered, signed(payload), cfg).catch((e) => e.details)).toEqual([
      { path: "stripe-signature", message: expect.stringContaining("Signature verification failed") },
    ]);
    expect(await codeOf(handleStripeWebhook(payload, signed(payload, "whsec_other"), cfg))).toBe("validation_failed");
    expect(await codeOf(handleStripeWebhook(payload, null, cfg))).toBe("validation_failed");
    // an event type we do not handle is acknowledged and ignored
    const other = event(unique("evt"), "customer.created", { id: "cus_1", object: "customer" });
    expect(await handleStripeWebhook(other, signed(other), cfg)).toMatchObject({ outcome: "ignored" });
    expect(await codeOf(handleStripeWebhook(payload, signed(payload), {}))).toBe("not_found");
  });

  it("settling an invoice another way expires its Checkout Session; money that still arrives raises an operator alert", async () => {
    const w = await world();
    const cfg = { secretKey: "sk_test_x", apiBase, webhookSecret: secret };
    const settle = async (how: "bank" | "void") => {
      await finishJob(operator, (await runningJob(w, 1, 600)).id, { status: "completed" });
      const inv = await generateInvoice(operator, w.tenant.id, { period_start: "2020-01-01T00:00:00Z" });
      const session = unique("cs_live");
      await db().invoice.update({
        where: { id: inv.id },
        data: { stripeSessionId: session, stripeUrl: `https://checkout.stripe.test/c/pay/${session}` },
      });
      if (how === "bank") await payInvoice(operator, inv.id, { method: "bank", reference: "wire" }, cfg);
      else await voidInvoice(operator, inv.id, cfg);
      expect(requests).toContainEqual(expect.stringMatching(new RegExp(`^POST /v1/checkout/sessions/${session}/expire`)));
      return { inv, session };
    };
    for (const how of ["bank", "void"] as const) {
      const { inv, session } = await settle(how);
      // the session was paid before it expired (or Stripe could not be reached): the money is not kept silently
      const payload = event(unique("evt"), "checkout.session.completed", {
        id: session,
        object: "checkout.session",
        payment_status: "paid",
        payment_intent: unique("pi"),
        amount_total: 1234,
        currency: "usd",
        metadata: { invoice_id: inv.id },
      });
      expect(await handleStripeWebhook(payload, signed(payload), cfg)).toMatchObject({
        outcome: how === "bank" ? "already_paid" : "invoice_void",
      });
      const alert = await db().alertEvent.findFirstOrThrow({ where: { ruleType: "unexpected_payment", subjectId: inv.id } });
      expect(alert).toMatchObject({ status: "firing", severity: "critical", subjectType: "invoice", tenantId: null });
      expect(alert.message).toContain("12.34 USD");
      expect(await db().notification.count({ where: { alertEventId: alert.id } })).toBeGreaterThan(0);
      expect((await db().invoice.findUniqueOrThrow({ where: { id: inv.id } })).status).toBe(how === "bank" ? "paid" : "void");
    }
  });
  // card deposits (Checkout, webhooks, refunds): tests/integration/card-deposits.test.ts
});
