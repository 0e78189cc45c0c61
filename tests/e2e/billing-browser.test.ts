import type { Browser } from "playwright-core";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { db, pool } from "@/lib/db/client";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { launchBrowser, openPage, shot } from "../support/browser";
import { agentPrincipal, inventory, makeCluster, makeKey, makeTenant, makeUser, unique } from "../support/fixtures";
import { E2E_STRIPE_WEBHOOK_SECRET } from "../support/stripe";
import { api } from "../support/http";

// Money end to end: a tenant's running cost, an operator's invoice, the tenant paying it on the
// local payment page (no Stripe key here), both planes showing it paid; then Stripe's webhook
// over HTTP with real signatures.

let browser: Browser;
let tenant: Awaited<ReturnType<typeof makeTenant>>;
let tenantUser: Awaited<ReturnType<typeof makeUser>>;
let operator: Awaited<ReturnType<typeof makeUser>>;
let tenantKey: string;
let operatorKey: string;
let jobId: string;
let gpuType: string;

beforeAll(async () => {
  const cluster = await makeCluster();
  gpuType = unique("BW").replace(/-/g, "").slice(0, 10).toUpperCase();
  await db().gpuRate.create({ data: { gpuType, centsPerHour: 250, effectiveFrom: new Date("2020-01-01"), createdBy: "e2e" } });
  const node = await registerNode({ principal: agentPrincipal(cluster.id) }, { hostname: unique("bill"), gpus: inventory(4, gpuType) });
  await recordHeartbeat({ principal: agentPrincipal(cluster.id) }, node.node.id, {});
  tenant = await makeTenant(8);
  tenantUser = await makeUser("tenant_admin", tenant.id);
  operator = await makeUser("operator");
  tenantKey = (await makeKey({ scope: "tenant", tenant_id: tenant.id })).key;
  operatorKey = (await makeKey({ scope: "operator" })).key;
  const submitted = await api("POST", "/api/jobs", {
    key: tenantKey,
    body: { name: "render-farm", gpu_count: 4, gpu_type: gpuType, duration_s: 86_400 },
  });
  expect(submitted.status).toBe(201);
  jobId = submitted.body.job.id;
  await runSchedulerCycle("e2e");
  // it has been running for two hours: 4 GPUs × 2 h × $2.50 = $20.00
  await pool().query(`UPDATE jobs SET started_at = now() - interval '2 hours' WHERE id = $1 AND status = 'running'`, [jobId]);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

const signedIn = (user: { email: string; password: string }, target: string) => openPage(browser, target, user);

describe("billing in both planes", () => {
  it("tenant sees its running cost; operator invoices it; tenant pays on the local payment page; both planes show it paid", async () => {
    expect((await api("GET", `/api/jobs/${jobId}`, { key: tenantKey })).body.job.status).toBe("running");
    const tenantPage = await signedIn(tenantUser, "/dashboard/billing");
    await tenantPage.getByRole("heading", { name: "Billing" }).waitFor();
    const thisMonth = tenantPage.locator("section", { hasText: "This month" }).first();
    await expect
      .poll(async () => Number((await thisMonth.textContent())?.match(/\$([\d,.]+)/)?.[1]?.replace(/,/g, "") ?? 0))
      .toBeGreaterThanOrEqual(19.99);
    await shot(tenantPage, "billing-tenant-running");

    // the operator credits the tenant and invoices the last day
    const opPage = await signedIn(operator, `/admin/tenants/${tenant.id}`);
    const deposit = opPage.locator("form[aria-label='Record deposit']");
    await deposit.locator("#f-amount").fill("abc");
    await deposit.getByRole("button", { name: "Record deposit" }).click();
    await deposit.getByText("Check the highlighted fields.").waitFor();
    await deposit.locator("#f-amount").fill("100.00");
    await deposit.getByRole("button", { name: "Record deposit" }).click();
    await deposit.getByText("$100.00 credited.").waitFor();
    const gen = opPage.locator("form[aria-label='Generate invoice']");
    // whole UTC days from date pickers, the last one included: yesterday and today
    expect(await gen.locator("#f-first_day").getAttribute("type")).toBe("date");
    await gen.locator("#f-first_day").fill(new Date(Date.now() - 86_400_000).toISOString().slice(0, 10));
    await gen.locator("#f-last_day").fill(new Date().toISOString().slice(0, 10));
    await gen.getByRole("button", { name: "Generate invoice" }).click();
    await opPage.waitForURL(/\/admin\/billing\/invoices\/[0-9a-f-]{36}$/);
    const invoiceId = opPage.url().split("/").pop()!;
    await opPage.getByRole("heading", { name: /^INV-\d{6}$/ }).waitFor();
    await opPage.getByText("render-farm (4 × ").waitFor();
    await shot(opPage, "billing-invoice-operator");
    const inv = (await api("GET", `/api/invoices/${invoiceId}`, { key: tenantKey })).body.invoice;
    expect(inv).toMatchObject({ status: "pending", payment_url: expect.stringContaining(`/dashboard/billing/invoices/${invoiceId}`) });
    expect(inv.amount_cents).toBeGreaterThanOrEqual(2000);
    expect(inv.amount_cents).toBe(inv.lines.reduce((s: number, l: { amount_cents: number }) => s + l.amount_cents, 0));

    // the tenant pays from its balance on the local payment page
    await tenantPage.goto(`${inject("baseUrl")}/dashboard/billing`);
    await tenantPage.locator("tr", { hasText: inv.number }).getByRole("link", { name: "Pay" }).click();
    // without Stripe: pay from the balance, or by transfer quoting the invoice number; no card button
    const howToPay = tenantPage.getByRole("region", { name: "How to pay" });
    await howToPay.getByRole("heading", { name: "By bank transfer" }).waitFor();
    await howToPay.getByText(inv.number).first().waitFor();
    expect(await howToPay.getByRole("button", { name: "Pay by card" }).count()).toBe(0);
    await tenantPage.getByRole("button", { name: /Pay from balance/ }).click();
    await tenantPage.getByText(`${inv.number} is paid (from your prepaid balance). Thank you.`).waitFor();
    await tenantPage.getByText(/^Paid .* \(balance\)$/).waitFor();
    await shot(tenantPage, "billing-invoice-paid-tenant");
    const csv = await api("GET", `/api/invoices/${invoiceId}/csv`, { key: tenantKey });
    expect(csv.status).toBe(200);

    await opPage.goto(`${inject("baseUrl")}/admin/billing?status=paid`);
    await opPage.locator("tr", { hasText: inv.number }).getByText("paid").waitFor();
    await shot(opPage, "billing-operator");
    const ledger = (await api("GET", `/api/tenants/${tenant.id}/transactions`, { key: tenantKey })).body;
    expect(ledger.balance_cents).toBe(10_000 - inv.amount_cents);
    expect(ledger.data.map((e: { kind: string }) => e.kind)).toEqual(["invoice_payment", "deposit"]);
    await tenantPage.context().close();
    await opPage.context().close();
  });

  it("Stripe's webhook over HTTP: signed event marks an invoice paid once; tampered or unsigned is refused", async () => {
    await api("PATCH", `/api/jobs/${jobId}`, { key: operatorKey, body: { status: "completed", exit_code: 0 } });
    // another hour of one GPU, invoiced on its own
    const submitted = await api("POST", "/api/jobs", {
      key: tenantKey,
      body: { name: "short", gpu_count: 1, gpu_type: gpuType, duration_s: 3600 },
    });
    await runSchedulerCycle("e2e");
    await pool().query(`UPDATE jobs SET started_at = now() - interval '1 hour' WHERE id = $1 AND status = 'running'`, [
      submitted.body.job.id,
    ]);
    await api("PATCH", `/api/jobs/${submitted.body.job.id}`, { key: operatorKey, body: { status: "completed", exit_code: 0 } });
    const made = await api("POST", `/api/tenants/${tenant.id}/invoice`, {
      key: operatorKey,
      body: { period_start: new Date(Date.now() - 7_200_000).toISOString() },
    });
    expect(made.status).toBe(201);
    const invoiceId = made.body.invoice.id;
    const stripe = new Stripe("sk_test_unused");
    const payload = JSON.stringify({
      id: unique("evt"),
      object: "event",
      type: "checkout.session.completed",
      data: {
        object: {
          id: "cs_e2e",
          object: "checkout.session",
          payment_status: "paid",
          payment_intent: "pi_e2e",
          metadata: { invoice_id: invoiceId },
        },
      },
    });
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret: E2E_STRIPE_WEBHOOK_SECRET });
    const send = (body: string, sig?: string) =>
      api("POST", "/api/webhooks/stripe", {
        rawBody: body,
        headers: { "content-type": "application/json", ...(sig ? { "stripe-signature": sig } : {}) },
      });
    expect((await send(payload.replace("pi_e2e", "pi_evil"), header)).status).toBe(400);
    expect((await send(payload)).status).toBe(400);
    expect((await api("GET", `/api/invoices/${invoiceId}`, { key: tenantKey })).body.invoice.status).toBe("pending");
    const first = await send(payload, header);
    expect(first).toMatchObject({ status: 200, body: { received: true, outcome: "invoice_paid" } });
    expect((await send(payload, header)).body.outcome).toBe("duplicate");
    expect((await api("GET", `/api/invoices/${invoiceId}`, { key: tenantKey })).body.invoice).toMatchObject({
      status: "paid",
      payment_method: "stripe",
    });
    // a GPU type that is not one is named, and no rate is written
    const bad = await api("PUT", `/api/billing/rates/${encodeURIComponent("bad type!")}`, {
      key: operatorKey,
      body: { cents_per_hour: 100 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([expect.objectContaining({ path: "gpu_type" })]);
    expect(await db().gpuRate.count({ where: { gpuType: "bad type!" } })).toBe(0);
    const summary = (await api("GET", "/api/billing/summary", { key: operatorKey })).body;
    expect(summary.revenue_cents).toBeGreaterThan(0);
    expect((await api("GET", "/api/dashboard", { key: operatorKey })).body.revenue_month_cents).toBeGreaterThan(0);
  });
});
