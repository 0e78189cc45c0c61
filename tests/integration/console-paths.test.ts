import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { generateInvoice } from "@/lib/billing/generate-invoice";
import { invoiceEmailDelivery, queueInvoiceEmail } from "@/lib/billing/invoice-email";
import { invoiceCsv } from "@/lib/billing/invoice-documents";
import { invoiceJson } from "@/lib/billing/invoice-json";
import { payInvoice } from "@/lib/billing/pay-invoice";
import { payInvoiceByCard } from "@/lib/billing/pay-invoice-by-card";
import { depositFunds } from "@/lib/billing/ledger";
import { db, pool } from "@/lib/db/client";
import { finishJob } from "@/lib/jobs/finish-job";
import { submitJob } from "@/lib/jobs/submit-job";
import { createReservation } from "@/lib/reservations/create-reservation";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { createTenant } from "@/lib/tenants/create-tenant";
import { operatorTenantOverview } from "@/lib/tenants/tenant-page";
import { listJobsPage } from "@/lib/jobs/list-jobs";
import { jobListParams } from "@/lib/jobs/schemas";
import { schedulerCycles } from "@/lib/jobs/scheduler-page";
import { actorFor, asTenantAdmin, availableFleet, operatorPrincipal, unique } from "../support/fixtures";
import { codeOf } from "../support/outcomes";

// Paths that used to end nowhere (issue 32): an invoice line for work inside a reservation says the
// reservation paid for it; an invoice's payment link is "sent" only when an email left; a tenant
// pays an invoice by card whether or not it was issued with a Checkout link, or its link expired.

const operator = actorFor(operatorPrincipal);
const RATE = 360;

async function pricedFleet(nodes: number, gpus: number) {
  const fleet = await availableFleet(nodes, gpus, "CP");
  await db().gpuRate.create({
    data: { gpuType: fleet.gpuType, centsPerHour: RATE, effectiveFrom: new Date("2020-01-01"), createdBy: "test" },
  });
  return fleet;
}

/** A job placed now, its run moved `seconds` into the past; `finish` ends it. */
async function runningJob(tenantId: string, gpuType: string, seconds: number, opts: { reservationId?: string; gpus?: number } = {}) {
  const job = await submitJob(asTenantAdmin(tenantId), {
    name: unique("job"),
    gpu_count: opts.gpus ?? 1,
    gpu_type: gpuType,
    priority: 1,
    max_retries: 0,
    ...(opts.reservationId ? { reservation_id: opts.reservationId } : {}),
  });
  await runSchedulerCycle("paths");
  const placed = await db().job.findUniqueOrThrow({ where: { id: job.id }, select: { status: true, pendingReason: true } });
  expect(placed, `${placed.pendingReason}`).toMatchObject({ status: "running" });
  await pool().query(`UPDATE jobs SET started_at = started_at - make_interval(secs => $2::int) WHERE id = $1`, [job.id, seconds]);
  return { ...job, finish: () => finishJob(operator, job.id, { status: "completed" }) };
}

/** A job that ran for `seconds` and finished. */
async function ranJob(tenantId: string, gpuType: string, seconds: number) {
  const job = await runningJob(tenantId, gpuType, seconds);
  await job.finish();
  return job;
}

describe("invoice lines of work inside a reservation", () => {
  it("name the reservation that covered them instead of charging $0.00 as if free", async () => {
    const { gpuType } = await pricedFleet(2, 2);
    const tenant = await createTenant(systemActor, { name: unique("Covered Co"), gpu_quota: 16, billing_email: null });
    const now = Date.now();
    const reservation = await createReservation(asTenantAdmin(tenant.id), {
      gpu_type: gpuType,
      node_count: 1,
      starts_at: new Date(now).toISOString(),
      ends_at: new Date(now + 3_600_000).toISOString(),
    });
    const inside = await runningJob(tenant.id, gpuType, 1200, { reservationId: reservation.id });
    // two GPUs while the job inside holds one of the reserved node's two: it runs on demand on the other node
    const outside = await runningJob(tenant.id, gpuType, 600, { gpus: 2 });
    await inside.finish();
    await outside.finish();
    const inv = await generateInvoice(operator, tenant.id, { period_start: new Date(now - 86_400_000).toISOString() });
    const lines = invoiceJson(inv).lines.flatMap((l) => l.jobs);
    const covered = lines.find((l) => l.job_id === inside.id)!;
    expect(covered).toMatchObject({ covered_by_reservation_id: reservation.id, amount_cents: 0 });
    expect(covered.description).toContain(`covered by reservation ${reservation.id.slice(0, 8)}`);
    expect(covered.gpu_seconds).toBeGreaterThanOrEqual(1200);
    expect(lines.find((l) => l.job_id === outside.id)).toMatchObject({ covered_by_reservation_id: null, amount_cents: 120 });
    expect(invoiceCsv({ ...inv, lines: inv.lines }).body).toContain(reservation.id);
    // the database keeps a covered line free
    const line = await db().invoiceLine.findFirstOrThrow({ where: { invoiceId: inv.id, jobId: inside.id } });
    await expect(pool().query(`UPDATE invoice_lines SET amount_cents = 1 WHERE id = $1`, [line.id])).rejects.toMatchObject({
      code: "23514",
    });
  });
});

describe("an invoice's payment link", () => {
  it("is emailed to the billing address when an email server is set, and the invoice says whether it was", async () => {
    const { gpuType } = await pricedFleet(1, 1);
    const mailed = await createTenant(systemActor, { name: unique("Mailed Co"), gpu_quota: 4, billing_email: "ap@mailed.test" });
    const silent = await createTenant(systemActor, { name: unique("Silent Co"), gpu_quota: 4, billing_email: null });
    await ranJob(mailed.id, gpuType, 600);
    await ranJob(silent.id, gpuType, 600);
    const since = { period_start: new Date(Date.now() - 86_400_000).toISOString() };
    // the test server has no email server configured: nothing was sent, and the page says why
    const a = await generateInvoice(operator, mailed.id, since);
    const b = await generateInvoice(operator, silent.id, since);
    expect(await invoiceEmailDelivery(a.id)).toMatchObject({ state: "no_email_channel", target: "ap@mailed.test" });
    expect(await invoiceEmailDelivery(b.id)).toMatchObject({ state: "no_billing_email", target: null });
    expect(await db().notification.count({ where: { invoiceId: { in: [a.id, b.id] } } })).toBe(0);

    const cfg = { smtpUrl: "smtp://127.0.0.1:1", emailFrom: "billing@gpuforge.test", emailTo: [], publicUrl: "http://console.test" };
    expect(await queueInvoiceEmail(b.id, cfg)).toBe("no_billing_email");
    expect(await queueInvoiceEmail(a.id, cfg)).toBe("queued");
    expect(await queueInvoiceEmail(a.id, cfg)).toBe("queued"); // once: the outbox keeps one per invoice and channel
    const rows = await db().notification.findMany({ where: { invoiceId: a.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: "invoice", channel: "email", target: "ap@mailed.test", status: "pending" });
    expect(rows[0]!.subject).toContain(invoiceJson(a).number);
    expect(rows[0]!.body).toContain(`/dashboard/billing/invoices/${a.id}`);
    expect(await invoiceEmailDelivery(a.id)).toMatchObject({ state: "pending", target: "ap@mailed.test", sentAt: null });
    // a paid invoice is not announced again
    await depositFunds(systemActor, silent.id, 10_000, "test");
    await payInvoice(asTenantAdmin(silent.id), b.id, { method: "balance" });
    expect(await queueInvoiceEmail(b.id, cfg)).toBe("not_pending");
    // the database keeps invoice notifications to email, about one invoice each
    await expect(
      pool().query(
        `INSERT INTO notifications (invoice_id, kind, channel, target, subject, body) VALUES ($1, 'invoice', 'webhook', 'x', 's', 'b')`,
        [b.id],
      ),
    ).rejects.toMatchObject({ code: "23514" });
    // the pending row leaves the outbox's way of the other tests' deliveries
    await pool().query(`UPDATE notifications SET status = 'failed', last_error = 'test' WHERE invoice_id = $1`, [a.id]);
    expect(await invoiceEmailDelivery(a.id)).toMatchObject({ state: "failed", error: "test" });
  });
});

describe("paying an invoice by card", () => {
  let server: http.Server;
  let apiBase = "";
  const sessions = new Map<string, "open" | "expired">();
  const creates: Array<{ key: string | undefined; body: string }> = [];
  beforeAll(async () => {
    // stands in for api.stripe.com: creates sessions, and answers for each what its state is now
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        const reply = (status: number, o: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(o));
        const got = /^\/v1\/checkout\/sessions\/([^/?]+)$/.exec(req.url ?? "");
        if (req.method === "GET" && got) {
          const state = sessions.get(got[1]!);
          if (!state) return reply(404, { error: { type: "invalid_request_error", message: "No such checkout.session" } });
          return reply(200, {
            id: got[1],
            object: "checkout.session",
            status: state,
            url: state === "open" ? `https://checkout.stripe.test/c/pay/${got[1]}` : null,
          });
        }
        if (req.method === "POST" && req.url === "/v1/checkout/sessions") {
          const key = req.headers["idempotency-key"] as string | undefined;
          creates.push({ key, body: decodeURIComponent(body) });
          const id = `cs_test_${creates.length}`;
          sessions.set(id, "open");
          return reply(200, { id, object: "checkout.session", status: "open", url: `https://checkout.stripe.test/c/pay/${id}` });
        }
        reply(404, { error: { type: "invalid_request_error", message: `no route ${req.method} ${req.url}` } });
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    apiBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  it("opens the invoice's Checkout while it is open, a new one once it expired, even for an invoice issued without one", async () => {
    const { gpuType } = await pricedFleet(1, 1);
    const tenant = await createTenant(systemActor, { name: unique("Card Co"), gpu_quota: 4, billing_email: "ap@card.test" });
    const other = await createTenant(systemActor, { name: unique("Other Co"), gpu_quota: 4, billing_email: null });
    await ranJob(tenant.id, gpuType, 600);
    // issued before Stripe was configured: no Checkout link at all
    const inv = await generateInvoice(operator, tenant.id, { period_start: new Date(Date.now() - 86_400_000).toISOString() });
    expect(inv.stripeUrl).toBeNull();
    const stripe = { secretKey: "sk_test_x", apiBase };
    const asTenant = asTenantAdmin(tenant.id);

    const first = await payInvoiceByCard(asTenant, inv.id, stripe);
    expect(first.url).toBe("https://checkout.stripe.test/c/pay/cs_test_1");
    expect(creates.at(-1)).toMatchObject({ key: `invoice-${inv.id}` });
    expect(creates.at(-1)!.body).toContain(`metadata[invoice_id]=${inv.id}`);
    expect(await db().invoice.findUniqueOrThrow({ where: { id: inv.id } })).toMatchObject({ stripeSessionId: "cs_test_1" });
    // still open: the same session, nothing created
    expect(await payInvoiceByCard(asTenant, inv.id, stripe)).toEqual(first);
    expect(creates).toHaveLength(1);
    // expired (a Checkout link lives a day): two tabs at once get one new session, keyed by the one it replaces
    sessions.set("cs_test_1", "expired");
    const [x, y] = await Promise.all([payInvoiceByCard(asTenant, inv.id, stripe), payInvoiceByCard(asTenant, inv.id, stripe)]);
    expect(creates.slice(1).map((c) => c.key)).toEqual([`invoice-${inv.id}-after-cs_test_1`, `invoice-${inv.id}-after-cs_test_1`]);
    const stored = await db().invoice.findUniqueOrThrow({ where: { id: inv.id } });
    expect([x.url, y.url]).toContain(stored.stripeUrl);
    expect(stored.stripeSessionId).not.toBe("cs_test_1");

    // refusals: another tenant's invoice is not found, a paid one has nothing to pay, no Stripe is said so
    expect(await codeOf(payInvoiceByCard(asTenantAdmin(other.id), inv.id, stripe))).toBe("not_found");
    expect(await codeOf(payInvoiceByCard(asTenant, inv.id, {}))).toBe("conflict");
    await depositFunds(systemActor, tenant.id, 10_000, "test");
    await payInvoice(asTenant, inv.id, { method: "balance" });
    expect(await codeOf(payInvoiceByCard(asTenant, inv.id, stripe))).toBe("conflict");
  });
});

describe("the operator's views of a tenant and of the scheduler", () => {
  it("a cycle names the jobs it placed and left waiting, in the operator's words; the tenant page shows usage, money, running work and invoices", async () => {
    const { gpuType } = await pricedFleet(1, 2);
    const tenant = await createTenant(systemActor, { name: unique("Queue Co"), gpu_quota: 2, billing_email: null });
    const runs = await submitJob(asTenantAdmin(tenant.id), {
      name: unique("runs"),
      gpu_count: 2,
      gpu_type: gpuType,
      priority: 1,
      max_retries: 0,
    });
    await runSchedulerCycle("operator-views");
    const waits = await submitJob(asTenantAdmin(tenant.id), {
      name: unique("waits"),
      gpu_count: 1,
      gpu_type: gpuType,
      priority: 1,
      max_retries: 0,
    });
    await runSchedulerCycle("operator-views-2");
    const cycles = await schedulerCycles(50);
    // this test's cycle, or another file's that ran first: the one that placed it names it
    const placedIn = cycles.find((c) => c.decisions.some((d) => d.id === runs.id && d.outcome === "placed"))!;
    expect(placedIn).toBeDefined();
    expect(placedIn.decisions).toContainEqual(
      expect.objectContaining({
        id: runs.id,
        kind: "job",
        name: runs.name,
        tenant: tenant.name,
        outcome: "placed",
        what: "placed on 2 GPUs of 1 node",
      }),
    );
    // the waiting job was blocked by quota at submit; an operator's view of its reason names the tenant
    const page = await listJobsPage(operatorPrincipal, jobListParams.parse({ tenant_id: tenant.id, status: "waiting" }));
    expect(page.rows.find((r) => r.id === waits.id)!.pendingReason).toMatch(new RegExp(`^Quota: ${tenant.name} holds 2 of its 2 GPUs`));
    const own = await listJobsPage(asTenantAdmin(tenant.id).principal, jobListParams.parse({ status: "waiting" }));
    expect(own.rows.find((r) => r.id === waits.id)!.pendingReason).toMatch(/^Quota: your organisation holds 2 of its 2 GPUs/);

    const view = await operatorTenantOverview({ kind: "operator", label: "test" }, tenant.id);
    expect(view.figures.gpu_in_use).toBe(2);
    expect(view.running.map((j) => j.id)).toEqual([runs.id]);
    expect(view.counts).toMatchObject({ running: 1, blocked: 1 });
    expect(view.month.total_cents).toBe(view.month.billed_cents + view.month.accruing_cents);
    expect(view.invoices).toEqual([]);
  });
});
