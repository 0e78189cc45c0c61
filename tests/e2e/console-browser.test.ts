import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { generateInvoice } from "@/lib/billing/generate-invoice";
import { depositFunds } from "@/lib/billing/ledger";
import { db, pool } from "@/lib/db/client";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { submitJob } from "@/lib/jobs/submit-job";
import { createTenant } from "@/lib/tenants/create-tenant";
import { describeRange, fittingPreset, parseTimeRange } from "@/lib/metrics/time-range";
import { axeViolations } from "../support/axe";
import { confirmInDialog, launchBrowser, openPage } from "../support/browser";
import { actorFor, agentPrincipal, inventory, makeCluster, makeUser, unique, unreachableNodeAlerts } from "../support/fixtures";

// The console as operators and tenants use it every day (issue 23), walked in Chromium at desktop
// and phone widths: figures that agree, charts on a real time axis with a range picker, lists that
// filter, sort, page and export, job pages that answer questions, validation in plain words,
// payment paths, settings with a send-test, alerts that group and silence, readable audit, roles,
// safer keys, phone navigation, and the small things. Every changed page is photographed at both
// widths and scanned for accessibility.

let browser: Browser;
let operator: Awaited<ReturnType<typeof makeUser>>;
let admin: Awaited<ReturnType<typeof makeUser>>;
let member: Awaited<ReturnType<typeof makeUser>>;
let w: Awaited<ReturnType<typeof world>>;
const base = () => inject("baseUrl");
const a11y: string[] = [];

/** A tenant with a GPU type of its own on one node (4 GPUs, nobody running the agent), priced. */
async function world() {
  const cluster = await makeCluster();
  const gpuType = unique("W").replace(/-/g, "").slice(0, 10).toUpperCase();
  await db().gpuRate.create({ data: { gpuType, centsPerHour: 360, effectiveFrom: new Date("2020-01-01"), createdBy: "walk" } });
  const agent = actorFor(agentPrincipal(cluster.id));
  const node = await registerNode(agent, {
    hostname: unique("walk-node"),
    capabilities: { containers: true, runtime: "docker test" },
    gpus: inventory(4, gpuType),
  });
  const beat = () => recordHeartbeat(agent, node.node.id, {});
  await beat();
  const tenant = await createTenant(systemActor, { name: unique("Walk Co"), gpu_quota: 4, billing_email: null });
  return { cluster, gpuType, node: node.node, beat, tenant };
}

beforeAll(async () => {
  browser = await launchBrowser();
  w = await world();
  operator = await makeUser("operator");
  admin = await makeUser("tenant_admin", w.tenant.id);
  member = await makeUser("tenant_member", w.tenant.id);
});
afterAll(async () => browser?.close());

const signedIn = (target: string, user: { email: string; password: string }, width = 1440) =>
  openPage(browser, target, user, { width, height: width > 500 ? 1000 : 844 });
const asUser = (u: { id: string; email: string }, role: "tenant_admin" | "tenant_member") =>
  actorFor({ kind: "tenant", tenantId: w.tenant.id, role, userId: u.id, label: u.email });

/** The page at 1440 px and at a 390 px phone, full length, kept with the test results; and an accessibility scan. */
async function photograph(page: Page, name: string) {
  const dir = path.join(inject("artifactsDir"), "screenshots");
  const size = page.viewportSize()!;
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.setViewportSize({ width: 1440, height: 1000 });
  await page.screenshot({ path: path.join(dir, `${name}-1440.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(dir, `${name}-390.png`), fullPage: true });
  await page.setViewportSize(size);
  for (const v of await axeViolations(page)) a11y.push(`${name}: ${v}`);
}

describe("1. endpoint figures that agree", () => {
  it("a brand-new endpoint says 'no data yet' in its list and on its page, never 0 %", async () => {
    // a tenant and a node of its own, so the walks below keep this tenant's quota and GPUs
    const cluster = await makeCluster();
    const agent = actorFor(agentPrincipal(cluster.id));
    const node = await registerNode(agent, {
      hostname: unique("ep-node"),
      capabilities: { containers: true, runtime: "docker test" },
      gpus: inventory(1, w.gpuType),
    });
    await recordHeartbeat(agent, node.node.id, {});
    const tenant = await createTenant(systemActor, { name: unique("Fresh Co"), gpu_quota: 2, billing_email: null });
    const owner = await makeUser("tenant_admin", tenant.id);
    const e = await createEndpoint(
      actorFor({ kind: "tenant", tenantId: tenant.id, role: "tenant_admin", userId: owner.id, label: owner.email }),
      {
        name: unique("fresh"),
        model: "walk/model",
        gpu_type: w.gpuType,
        gpus_per_replica: 1,
        replicas: 1,
        cluster_id: cluster.id,
        sla_availability_pct: 99.5,
        sla_p95_ms: 400,
        autoscale_metric: "none",
        cooldown_s: 300,
      },
    );
    const page = await signedIn("/dashboard/endpoints", owner);
    await page.getByTestId(`endpoint-row-${e.name}`).getByText("no data yet").waitFor();
    await page.getByRole("link", { name: e.name }).click();
    await page.getByRole("heading", { name: e.name, level: 1 }).waitFor();
    const availability = page.getByTestId("slo-availability");
    await availability.getByText("No data yet").first().waitFor();
    expect(await availability.getAttribute("data-verdict")).toBe("no data yet");
    expect(await page.content()).not.toContain("0.00 %");
    await page.getByText(/No SLA alert\. The rule .* no data yet\./).waitFor();
    await photograph(page, "endpoint-no-data");
    await page.context().close();
  });
});

describe("2. charts on a real time axis", () => {
  it("the range picker changes what the overview, a node and a cluster chart ask for", async () => {
    await w.beat();
    const page = await signedIn("/admin", operator);
    const chart = page.getByTestId("utilization-chart");
    // a fleet younger than a day opens on the range that holds its data, not a sliver of 24 hours
    const since = (await db().node.aggregate({ _min: { createdAt: true } }))._min.createdAt;
    const opens = parseTimeRange({}, new Date(), fittingPreset("24h", since, new Date()));
    expect(opens.key).not.toBe("24h");
    await chart.getByRole("heading", { name: `GPU utilization, ${describeRange(opens)}` }).waitFor();
    expect(await chart.getAttribute("data-step")).toBe(String(opens.stepS));
    await chart.getByRole("link", { name: "24 h" }).click();
    await page.waitForURL(/\/admin\?range=24h$/);
    await chart.getByRole("heading", { name: "GPU utilization, last 24 hours" }).waitFor();
    expect(await chart.getAttribute("data-step")).toBe("900");
    // a custom window, in UTC
    await chart.getByText("Custom").click();
    await page.fill("#range-from", "2026-11-29T08:00");
    await page.fill("#range-to", "2026-11-29T20:00");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(/range=custom/);
    await chart.getByRole("heading", { name: "GPU utilization, 29 Nov 08:00 – 29 Nov 20:00 UTC" }).waitFor();
    expect(await chart.getAttribute("data-step")).toBe("300");
    await photograph(page, "overview-range");

    await page.goto(`${base()}/admin/nodes/${w.node.id}?range=6h`);
    expect(await page.getByTestId("node-charts").getAttribute("data-step")).toBe("300");
    await page.getByRole("heading", { name: "GPU utilization, last 6 hours" }).waitFor();
    await page.goto(`${base()}/admin/clusters/${w.cluster.id}`);
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Clusters" }).waitFor();
    await photograph(page, "cluster");
    await page.context().close();
  });
});

describe("3–5. lists, job pages and validation", () => {
  it("the queue narrows, sorts, exports; an operator reorders and cancels (audited); the node shows its work and confirms a drain", async () => {
    await w.beat();
    const prefix = unique("q");
    const runner = await submitJob(asUser(admin, "tenant_admin"), {
      name: `${prefix}-run`,
      gpu_count: 4,
      gpu_type: w.gpuType,
      priority: 1,
      max_retries: 0,
      image: "nvcr.io/nvidia/pytorch:24.10-py3",
      command: "python train.py --epochs 3",
    });
    const page = await signedIn(`/admin/jobs?status=running&q=${prefix}`, operator);
    await page.getByTestId(`job-row-${prefix}-run`).waitFor({ timeout: 20_000 });
    for (const n of [2, 3])
      await submitJob(asUser(member, "tenant_member"), {
        name: `${prefix}-wait-${n}`,
        gpu_count: 2,
        gpu_type: w.gpuType,
        priority: 5,
        max_retries: 0,
      });
    // the queue opens on what runs and what waits, as squeue does; its cards are its filters
    await page.goto(`${base()}/admin/jobs?q=${prefix}`);
    await page.getByTestId(`job-row-${prefix}-wait-2`).waitFor();
    expect(await page.getByTestId("list-range").textContent()).toBe("1–3 of 3");
    await page.getByTestId(`job-row-${prefix}-run`).waitFor();
    expect(await page.getByRole("link", { name: /^Running or waiting/ }).getAttribute("aria-current")).toBe("true");
    await page.getByRole("link", { name: /^Waiting\b/ }).click();
    await page.waitForURL(/status=waiting/);
    expect(new URL(page.url()).searchParams.get("q")).toBe(prefix);
    await page.getByTestId(`job-row-${prefix}-wait-2`).waitFor();
    expect(await page.getByTestId("list-range").textContent()).toBe("1–2 of 2");
    expect(await page.getByTestId(`job-row-${prefix}-run`).count()).toBe(0);
    expect(await page.getByRole("link", { name: /^Waiting\b/ }).getAttribute("aria-current")).toBe("true");
    // the operator reads why it waits about the tenant, by name, never "your organisation"
    await page
      .getByTestId(`job-row-${prefix}-wait-2`)
      .getByText(new RegExp(`^Quota: ${w.tenant.name} holds \\d+ of its 4 GPUs`))
      .waitFor();
    await photograph(page, "queue");

    // CSV of exactly this view
    const href = await page.getByRole("link", { name: "Export CSV" }).getAttribute("href");
    expect(href).toContain(`q=${prefix}`);
    const csv = await page.request.get(`${base()}${href}`);
    expect(csv.headers()["content-type"]).toContain("text/csv");
    const lines = (await csv.text()).trim().split("\r\n");
    expect(lines[0]).toMatch(/^id,name,tenant,status,/);
    expect(
      lines
        .slice(1)
        .map((l) => l.split(",")[1]!)
        .sort((x, y) => x.localeCompare(y)),
    ).toEqual([`${prefix}-wait-2`, `${prefix}-wait-3`]);

    // reorder: priority 5 → 2, recorded with the operator's name
    const row = page.getByTestId(`job-row-${prefix}-wait-3`);
    await row.locator("select[name=priority]").selectOption("2");
    await row.getByRole("button", { name: "Set" }).click();
    await row.getByText("✓").waitFor();
    const moved = await db().job.findFirstOrThrow({ where: { name: `${prefix}-wait-3` } });
    expect(moved.priority).toBe(2);
    await page.goto(`${base()}/admin/audit?q=job.priority_changed&action=job.`);
    await page
      .getByTestId("audit-row")
      .filter({ hasText: `${prefix}-wait-3` })
      .getByText(operator.name)
      .first()
      .waitFor();
    await photograph(page, "audit");

    // cancel from the queue
    await page.goto(`${base()}/admin/jobs?q=${prefix}-wait-2`);
    await page.getByTestId(`job-row-${prefix}-wait-2`).getByRole("button", { name: "Cancel" }).click();
    await confirmInDialog(page, { confirm: "Cancel job", keep: "Keep waiting" });
    await page.getByText("No jobs match").waitFor();
    expect((await db().job.findFirstOrThrow({ where: { name: `${prefix}-wait-2` } })).status).toBe("cancelled");

    // the running job's page, then its node; the node lists the job and says what a drain does
    await page.goto(`${base()}/admin/jobs/${runner.id}`);
    await page.getByText("python train.py --epochs 3").waitFor();
    await page.getByText("nvcr.io/nvidia/pytorch:24.10-py3").waitFor();
    await page.getByText("4 GPUs on 1 node").waitFor();
    await photograph(page, "admin-job");
    await page.getByRole("link", { name: w.node.hostname }).click();
    await page.waitForURL(`${base()}/admin/nodes/${w.node.id}`);
    await page
      .getByRole("table", { name: "Work running on this node" })
      .getByRole("link", { name: `${prefix}-run` })
      .waitFor();
    await w.beat();
    await page.getByRole("button", { name: "Drain…" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByTestId("node-action-impact").getByText("1 running job keeps running until it ends.").waitFor();
    expect(await dialog.locator("#node-reason").getAttribute("required")).not.toBeNull();
    await photograph(page, "node-drain-confirm");
    await dialog.locator("#node-reason").fill("firmware update, ticket OPS-42");
    await dialog.getByRole("button", { name: "Drain" }).click();
    await page.getByText(`${w.node.hostname} is now draining.`).waitFor();
    expect(await db().auditLog.findFirst({ where: { action: "node.draining", targetId: w.node.id } })).toMatchObject({
      details: expect.objectContaining({ reason: "firmware update, ticket OPS-42" }),
    });
    await page.context().close();
    await changeNodeStatus(actorFor({ kind: "operator", label: "walk" }), w.node.id, "available", "walk over");
  });

  it("a tenant's job page answers what, where and how much; clone and resubmit; 1 GPU on 1 node", async () => {
    await w.beat();
    const job = await db().job.findFirstOrThrow({ where: { tenantId: w.tenant.id, status: "running" } });
    const page = await signedIn(`/dashboard/jobs/${job.id}`, admin);
    await page.waitForLoadState("networkidle");
    await page.getByText("Cost so far").waitFor();
    await page.getByText("python train.py --epochs 3").waitFor();
    await page.getByText(w.node.hostname, { exact: true }).first().waitFor();
    // the run's output names where each attempt ran too
    await page.getByText(`Attempt 1 on ${w.node.hostname} (running)`).waitFor();
    expect(await page.getByRole("link", { name: w.node.hostname }).count()).toBe(0);
    await photograph(page, "tenant-job");
    await page.getByRole("link", { name: "Clone…" }).click();
    await page.waitForURL(/\/dashboard\/jobs\?clone=/);
    expect(await page.locator("#f-name").inputValue()).toBe(job.name);
    expect(await page.locator("#f-command").inputValue()).toBe("python train.py --epochs 3");
    await page.goto(`${base()}/dashboard/jobs/${job.id}`);
    await page.getByRole("button", { name: "Resubmit" }).click();
    await page.getByText("Submitted again: this is the new job").waitFor();
    expect(page.url()).not.toContain(job.id.slice(0, 8) + "?");
    const one = await submitJob(asUser(admin, "tenant_admin"), {
      name: unique("single"),
      gpu_count: 1,
      gpu_type: w.gpuType,
      priority: 9,
      max_retries: 0,
    });
    await page.goto(`${base()}/dashboard/jobs/${one.id}`);
    await page.getByText(/^1 GPU of type /).waitFor();
    expect(await page.content()).not.toMatch(/1 GPUs|node\(s\)/);
    await page.context().close();
  });

  it("sizes are judged against the quota and the fleet in plain words, with a cost estimate, before submitting", async () => {
    const page = await signedIn("/dashboard/jobs", member);
    // the form judges as it is typed: wait for it to be live before typing
    await page.waitForLoadState("networkidle");
    const form = page.locator("form[aria-label='Submit job']");
    await form.locator("#f-name").fill("too-big");
    await form.locator("#f-gpu_type").selectOption(w.gpuType);
    await form.locator("#f-gpu_count").fill("5000");
    await form.getByTestId("job-fit").getByText("5,000 GPUs is more than your organisation's quota of 4").waitFor();
    await form.getByRole("button", { name: "Submit job" }).click();
    await page
      .locator("#f-gpu_count-error")
      .getByText(/5,000 GPUs is more than your organisation's quota of 4 .*could never start/)
      .waitFor();
    await form.getByTestId("form-message").getByText("Check the highlighted fields.").waitFor();
    expect(await page.content()).not.toContain("Too big");
    // the error goes as soon as the field changes
    await form.locator("#f-gpu_count").fill("2");
    await page.locator("#f-gpu_count-error").waitFor({ state: "detached" });
    await form
      .getByTestId("job-fit")
      .getByText(/will wait until 2 GPUs are free/)
      .waitFor();
    await form.getByRole("button", { name: "Submit and wait for quota" }).waitFor();
    await form.locator("#f-duration_s").fill("7200");
    await form
      .getByTestId("job-estimate")
      .getByText(/About \$14\.40 for 2 h \(2 × .* at \$3\.60 per GPU-hour/)
      .waitFor();
    await photograph(page, "tenant-jobs");
    await page.context().close();

    // an operator setting a quota no fleet can fill is told so
    const ops = await signedIn(`/admin/tenants/${w.tenant.id}`, operator);
    await ops.locator("form[aria-label='Edit tenant'] #f-gpu_quota").fill("100000");
    await ops
      .getByTestId("quota-warning")
      .getByText(/can never be used in full/)
      .waitFor();
    await photograph(ops, "tenant-quota-warning");
    await ops.context().close();
  });
});

describe("6–7. payment paths and settings", () => {
  it("operators set bank details and test notification channels; secrets never come back to the page", async () => {
    const smtpMessages: string[] = [];
    const smtp = new SMTPServer({
      authOptional: true,
      allowInsecureAuth: true,
      disabledCommands: ["STARTTLS"],
      onAuth: (_a, _s, cb) => cb(null, { user: "walk" }),
      onData: (stream, _s, cb) => {
        let raw = "";
        stream.on("data", (c: Buffer) => (raw += c.toString()));
        stream.on("end", () => (smtpMessages.push(raw), cb()));
      },
    });
    await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", () => r()));
    const hooks: Array<{ path: string; body: { text: string; gpuforge: { kind: string } } }> = [];
    const hook = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => (hooks.push({ path: req.url!, body: JSON.parse(body) }), res.end("ok")));
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", () => r()));
    const smtpUrl = `smtp://walk:s3cret-pw@127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
    const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/services/T000/secret-path`;
    try {
      const page = await signedIn("/admin/settings", operator);
      const channels = page.locator("form[aria-label='Notification channels']");
      await channels.locator("#f-smtp_url").fill(smtpUrl);
      await channels.locator("#f-webhook_url").fill(hookUrl);
      await channels.locator("#f-email_to").fill("oncall@walk.test");
      await channels.getByRole("button", { name: "Save channels" }).click();
      await channels.getByText("Notification channels saved").waitFor();
      // a submit keeps keyboard focus where it was
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Save channels");
      await page.reload();
      await page
        .getByText(/Stored encrypted, points at 127\.0\.0\.1:\d+/)
        .first()
        .waitFor();
      const html = await page.content();
      expect(html).not.toContain("s3cret-pw");
      expect(html).not.toContain("secret-path");
      const rows = await db().platformSetting.findMany({ where: { key: { in: ["notifications.smtp_url", "notifications.webhook_url"] } } });
      expect(rows.map((r) => r.secretCiphertext)).toEqual([expect.stringMatching(/^v1:/), expect.stringMatching(/^v1:/)]);
      expect(JSON.stringify(rows)).not.toMatch(/s3cret-pw|secret-path/);

      await page.getByRole("button", { name: "Send test" }).click();
      const results = page.getByTestId("test-results");
      await results.getByText("delivered").nth(1).waitFor({ timeout: 20_000 });
      expect(await results.getByText("failed").count()).toBe(0);
      expect(smtpMessages.some((m) => m.includes("[GPUForge] Test notification") && m.includes("oncall@walk.test"))).toBe(true);
      expect(hooks.find((h) => h.body.gpuforge.kind === "test")?.path).toBe("/services/T000/secret-path");

      // bank details for tenants paying by transfer
      const bank = page.locator("form[aria-label='Bank details']");
      await bank.locator("#f-account_name").fill("GPUForge Walk Ltd");
      await bank.locator("#f-iban").fill("DE89 3704 0044 0532 0130 00");
      await bank.getByRole("button", { name: "Save bank details" }).click();
      await bank.getByText("Bank details saved").waitFor();
      await photograph(page, "settings");

      // the channels go back to none, so later walks record notifications only
      await channels.locator("input[name=remove_smtp_url]").check();
      await channels.locator("input[name=remove_webhook_url]").check();
      await channels.locator("#f-email_to").fill("");
      await channels.getByRole("button", { name: "Save channels" }).click();
      await channels.getByText("Notification channels saved").waitFor();
      expect(
        await db().platformSetting.count({
          where: { key: { in: ["notifications.smtp_url", "notifications.webhook_url", "notifications.email_to"] } },
        }),
      ).toBe(0);
      await page.context().close();
    } finally {
      await db().platformSetting.deleteMany({
        where: { key: { in: ["notifications.smtp_url", "notifications.webhook_url", "notifications.email_to"] } },
      });
      await new Promise((r) => smtp.close(() => r(null)));
      hook.close();
    }
  });

  it("a pending invoice shows how to pay: balance, or a transfer with the bank details and its reference", async () => {
    const job = await db().job.create({
      data: {
        tenantId: w.tenant.id,
        name: unique("billed"),
        gpuCount: 1,
        gpuType: w.gpuType,
        priority: 5,
        maxRetries: 0,
        status: "cancelled",
        finishedAt: new Date(),
      },
    });
    const end = new Date(Date.now() - 60_000);
    await pool().query(
      `INSERT INTO usage_events (tenant_id, job_id, attempt, kind, settlement, gpu_type, gpu_count, started_at, ended_at, gpu_seconds, cents_per_hour, amount_cents)
       VALUES ($1, $2, 1, 'final', 'invoice', $3, 1, $4, $5, 3600, 360, 360)`,
      [w.tenant.id, job.id, w.gpuType, new Date(end.getTime() - 3_600_000), end],
    );
    const inv = await generateInvoice(systemActor, w.tenant.id, {
      period_start: new Date(end.getTime() - 3_600_001).toISOString(),
      period_end: end.toISOString(),
    });
    const page = await signedIn(`/dashboard/billing/invoices/${inv.id}`, admin);
    const transfer = page.getByTestId("bank-transfer");
    await transfer.getByText("GPUForge Walk Ltd").waitFor();
    await transfer.getByText(`INV-${String(inv.number).padStart(6, "0")}`).waitFor();
    await page.getByText(/Your balance \(\$0\.00\) does not cover this invoice, so pay by transfer\./).waitFor();
    await photograph(page, "invoice-pay");
    await page.context().close();
  });

  it("a prepaid tenant sees its balance running out, when, what happens at zero, and how to add funds; forms estimate cost", async () => {
    const cluster = await makeCluster();
    const agent = actorFor(agentPrincipal(cluster.id));
    const node = await registerNode(agent, {
      hostname: unique("prepaid-node"),
      capabilities: { containers: true, runtime: "docker test" },
      gpus: inventory(2, w.gpuType),
    });
    await recordHeartbeat(agent, node.node.id, {});
    const prepaid = await createTenant(systemActor, {
      name: unique("Prepaid Co"),
      gpu_quota: 2,
      billing_email: null,
      billing_mode: "prepaid",
    });
    const owner = await makeUser("tenant_admin", prepaid.id);
    await depositFunds(actorFor({ kind: "operator", label: "walk" }), prepaid.id, 500, "wire");
    const burn = await submitJob(
      actorFor({ kind: "tenant", tenantId: prepaid.id, role: "tenant_admin", userId: owner.id, label: owner.email }),
      { name: unique("burn"), gpu_count: 2, gpu_type: w.gpuType, priority: 1, max_retries: 0, cluster_id: cluster.id },
    );
    // the app's scheduler places it within seconds; the banner speaks of what runs
    for (let i = 0; i < 40 && (await db().job.findUniqueOrThrow({ where: { id: burn.id } })).status !== "running"; i++)
      await new Promise((r) => setTimeout(r, 500));
    const page = await signedIn("/dashboard", owner);
    const banner = page.getByTestId("balance-banner");
    await banner.getByText(/running low/).waitFor({ timeout: 20_000 });
    await banner.getByText(/\$7\.20 per hour\) it reaches zero in about/).waitFor();
    await banner.getByText(/Then new work waits, and running work stops 15 min later\./).waitFor();
    await banner.getByRole("link", { name: "Add funds" }).click();
    await page.waitForURL(/\/dashboard\/billing#add-funds$/);
    await page
      .locator("#add-funds")
      .getByText(/^GF-[0-9A-F]{8}$/)
      .waitFor();
    await photograph(page, "prepaid-billing");
    await page.goto(`${base()}/dashboard/endpoints`);
    const form = page.locator("form[aria-label='Create endpoint']");
    await form.locator("#f-gpu_type").selectOption(w.gpuType);
    await form.locator("#f-replicas").fill("2");
    await form
      .getByTestId("endpoint-estimate")
      .getByText(/^\$7\.20 per hour, about \$5,184\.00 per 30 days/)
      .waitFor();
    await page.context().close();
    await db().platformSetting.deleteMany({ where: { key: "billing.bank_details" } });
  });
});

describe("8–9. alerts operators can live with, readable audit", () => {
  it("repeats group into one row, resolved ones need no acknowledgement, a silence quiets a subject", async () => {
    // a node that really is unreachable, so the background evaluator keeps its latest event firing
    // instead of resolving it mid-walk
    const { rule, subject } = await unreachableNodeAlerts(15, {
      subject: unique("flappy"),
      ruleName: unique("Walk unreachable"),
      notify: false,
    });
    const page = await signedIn(`/admin/alerts?q=${subject}&status=resolved`, operator);
    // another rule about every offline node (a seeded or another test's one) may alert on this node too: only this rule's rows
    const resolved = page.getByRole("table", { name: "All alerts" }).getByTestId("alert-row").filter({ hasText: rule.name });
    await resolved.first().waitFor();
    expect(await resolved.count()).toBe(1);
    await resolved.getByText("× 14").waitFor();
    expect(await resolved.getByRole("button", { name: "Acknowledge" }).count()).toBe(0);
    await resolved.getByText(/14 resolved since/).click();
    await resolved
      .getByText(/→ resolved/)
      .first()
      .waitFor();

    await page.goto(`${base()}/admin/alerts?q=${subject}`);
    const row = page.getByRole("table", { name: "All alerts" }).getByTestId("alert-row").filter({ hasText: rule.name });
    await row.first().waitFor();
    await row.getByText("× 15").waitFor();
    await row.getByText("Silence…").click();
    await row.getByLabel("Why").fill("known flapping link, OPS-77");
    await row.getByRole("button", { name: "Silence", exact: true }).click();
    // the page answers with the row silenced (and the silence form gone)
    await row.getByText("silenced", { exact: true }).waitFor();
    await row.getByText(/Nobody is notified until .*: known flapping link, OPS-77/).waitFor();
    await page.reload();
    await row.getByText("silenced", { exact: true }).waitFor();
    await photograph(page, "alerts");
    await page.goto(`${base()}/admin/alerts/silences`);
    const silence = page.getByTestId("silence-row").filter({ hasText: "known flapping link, OPS-77" });
    await silence.getByText("active").waitFor();
    await photograph(page, "silences");
    await silence.getByRole("button", { name: "End now" }).click();
    await silence.getByText("ended").waitFor();
    // rules are edited, not only disabled
    await page.goto(`${base()}/admin/alerts/rules`);
    await page.locator("tr", { hasText: rule.name }).getByRole("link", { name: "Edit" }).click();
    await page.getByRole("heading", { name: "Edit rule" }).waitFor();
    await page.context().close();
  });

  it("the audit log names people and keys, links objects, opens details, filters and exports", async () => {
    const page = await signedIn(`/admin/audit?action=job.&q=job.submitted`, operator);
    const row = page.getByTestId("audit-row").first();
    await row.waitFor();
    expect(await page.locator("table").textContent()).not.toMatch(/by key gf_/);
    await row.locator("details summary").click();
    await row.locator("dl").waitFor();
    const link = row.getByRole("link").first();
    expect(await link.getAttribute("href")).toMatch(/^\/admin\/jobs\/[0-9a-f-]{36}$/);
    const href = await page.getByRole("link", { name: "Export CSV" }).getAttribute("href");
    const csv = await (await page.request.get(`${base()}${href}`)).text();
    expect(csv.split("\r\n")[0]).toBe(
      "id,created_at,action,actor_kind,actor,actor_detail,target_type,target_id,target,tenant_id,request_id,details",
    );
    expect(csv).toContain(",job.submitted,");
    await page.context().close();
  });
});

describe("10–11. roles and keys", () => {
  it("members see who may cancel what; admins' pages answer 403 with who to ask", async () => {
    await submitJob(asUser(admin, "tenant_admin"), {
      name: unique("admins-job"),
      gpu_count: 1,
      gpu_type: w.gpuType,
      priority: 9,
      max_retries: 0,
    });
    const mine = await submitJob(asUser(member, "tenant_member"), {
      name: unique("members-job"),
      gpu_count: 1,
      gpu_type: w.gpuType,
      priority: 9,
      max_retries: 0,
    });
    const page = await signedIn("/dashboard/jobs?status=waiting", member);
    await page.getByTestId(`job-row-${mine.name}`).getByRole("button", { name: "Cancel" }).waitFor();
    await page.getByText("not yours").first().waitFor();
    await page.getByText(/members may cancel the jobs they submitted themselves/).waitFor();
    const res = await page.goto(`${base()}/dashboard/users`);
    expect(res?.status()).toBe(403);
    await page.getByRole("heading", { name: "This page is for your organisation's admins" }).waitFor();
    await photograph(page, "member-403");
    await page.context().close();
  });

  it("new keys start at the narrowest scope with an expiry; revoked keys wait behind a filter", async () => {
    const page = await signedIn("/admin/api-keys", operator);
    const form = page.locator("form[aria-label='Create API key']");
    expect(await form.locator("#f-scope").inputValue()).toBe("agent");
    expect(await form.locator("#f-expiry").inputValue()).toBe("90");
    const name = unique("walk-key");
    await form.locator("#f-name").fill(name);
    await form.locator("#f-scope").selectOption("tenant");
    await form.locator("#f-tenant_id").selectOption({ label: w.tenant.name });
    await form.locator("#f-expiry").selectOption("30");
    await form.getByRole("button", { name: "Create key" }).click();
    await page.getByText(/It expires \d{4}-\d{2}-\d{2}\./).waitFor();
    await page.reload();
    const row = page.locator("tr", { hasText: name });
    await row.getByText("in 30 days").waitFor();
    await photograph(page, "api-keys");
    await row.getByRole("button", { name: "Revoke" }).click();
    await confirmInDialog(page, { confirm: "Revoke key", keep: "Keep key" });
    await page.locator("tr", { hasText: name }).waitFor({ state: "detached" });
    await page.getByRole("link", { name: /Revoked and expired/ }).click();
    await page.locator("tr", { hasText: name }).getByText("revoked").waitFor();
    await page.context().close();
  });
});

describe("every other page the issue changed, at both widths", () => {
  it("operator and tenant pages render, photographed and scanned", async () => {
    const ops = await signedIn("/admin/alerts/notifications", operator);
    for (const [target, name] of [
      ["/admin/alerts/notifications", "notifications"],
      ["/admin/alerts/rules", "alert-rules"],
      ["/admin/alerts/remediations", "remediations"],
      ["/admin/endpoints", "admin-endpoints"],
      ["/admin/billing", "admin-billing"],
      [`/admin/tenants/${w.tenant.id}`, "admin-tenant"],
      ["/admin/analytics", "analytics"],
    ] as const) {
      await ops.goto(`${base()}${target}`);
      await ops.getByRole("heading", { level: 1 }).first().waitFor();
      await photograph(ops, name);
    }
    // the site's views follow the same picker: a week in hours, a day in quarter hours
    expect(await ops.getByTestId("views-chart").getAttribute("data-step")).toBe("3600");
    await ops.getByRole("navigation", { name: "Time range" }).getByRole("link", { name: "24 h" }).click();
    await ops.waitForURL(/\/admin\/analytics\?range=24h$/);
    expect(await ops.getByTestId("views-chart").getAttribute("data-step")).toBe("900");
    await ops.context().close();
    const tenant = await signedIn("/dashboard", admin);
    for (const [target, name] of [
      ["/dashboard", "tenant-home"],
      ["/dashboard/alerts", "tenant-alerts"],
      ["/dashboard/endpoints", "tenant-endpoints"],
      ["/dashboard/users", "tenant-users"],
      ["/dashboard/api-keys", "tenant-api-keys"],
      ["/dashboard/billing", "tenant-billing"],
    ] as const) {
      await tenant.goto(`${base()}${target}`);
      await tenant.getByRole("heading", { level: 1 }).first().waitFor();
      await photograph(tenant, name);
    }
    await tenant.getByText("Your role: admin").count();
    await tenant.context().close();
  });
});

describe("12–13. phones and the small things", () => {
  it("at 390 px the console opens on the page, with its menu behind a button; the public header keeps every link", async () => {
    const page = await signedIn("/admin", operator, 390);
    const nav = page.locator("#console-nav");
    expect(await nav.isVisible()).toBe(false);
    const button = page.getByRole("button", { name: "Menu" });
    expect(await button.getAttribute("aria-expanded")).toBe("false");
    await button.click();
    expect(await nav.isVisible()).toBe(true);
    await page.screenshot({ path: path.join(inject("artifactsDir"), "screenshots", "console-menu-open-390.png") });
    await nav.getByRole("link", { name: "Queue" }).click();
    await page.waitForURL(`${base()}/admin/jobs`);
    await nav.waitFor({ state: "hidden" });
    await page.context().close();

    const visitor = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    await visitor.goto(`${base()}/`);
    await visitor.getByText("Menu", { exact: true }).click();
    await visitor.getByRole("link", { name: "Use cases" }).first().waitFor();
    await visitor.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Blog" }).click();
    await visitor.waitForURL(`${base()}/blog`);
    await visitor.screenshot({ path: path.join(inject("artifactsDir"), "screenshots", "public-blog-390.png") });
    await visitor.context().close();
  });

  it("favicon, the API reference link, demo-request errors that clear, and the new pages' accessibility", async () => {
    const icon = await fetch(`${base()}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toMatch(/icon/);
    const page = await signedIn("/admin/settings", operator);
    const errors: string[] = [];
    page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    await page.reload();
    const ref = page.getByRole("link", { name: /API reference/ });
    expect(await ref.getAttribute("target")).toBe("_blank");
    expect(await ref.textContent()).toContain("opens in a new tab");
    expect(errors).toEqual([]);
    await page.context().close();

    const visitor = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await visitor.goto(`${base()}/`);
    await visitor.getByRole("button", { name: "Request a demo" }).first().click();
    const dialog = visitor.getByRole("dialog");
    await dialog.getByRole("button", { name: "Send request" }).click();
    await dialog.locator("#f-name-error").waitFor();
    await dialog.locator("#f-name").fill("Grace Hopper");
    await dialog.locator("#f-name-error").waitFor({ state: "detached" });
    await visitor.context().close();

    expect(a11y).toEqual([]);
  });
});
