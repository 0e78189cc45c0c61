import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { generateInvoice } from "@/lib/billing/generate-invoice";
import { db, pool } from "@/lib/db/client";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { ingestEndpointMetrics } from "@/lib/endpoints/endpoint-metrics";
import { reconcileEndpoints } from "@/lib/endpoints/reconcile-endpoints";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { finishJob } from "@/lib/jobs/finish-job";
import { submitJob } from "@/lib/jobs/submit-job";
import { createReservation } from "@/lib/reservations/create-reservation";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { createTenant } from "@/lib/tenants/create-tenant";
import { axeViolations } from "../support/axe";
import { confirmInDialog, launchBrowser, openPage } from "../support/browser";
import { actorFor, agentPrincipal, inventory, makeCluster, makeKey, makeUser, unique } from "../support/fixtures";
import { api } from "../support/http";

// Issue 32 in a real browser: one figure everywhere it is shown, forms that save what they show,
// SLA pages that tell the truth in colour, the product's own dialogs, the branded 404 with its
// status, focus rings, few tab stops, phones, and the paths that used to dead-end. Every page is
// photographed at both widths and scanned for accessibility.

let browser: Browser;
let operator: Awaited<ReturnType<typeof makeUser>>;
let admin: Awaited<ReturnType<typeof makeUser>>;
let member: Awaited<ReturnType<typeof makeUser>>;
let w: Awaited<ReturnType<typeof world>>;
const base = () => inject("baseUrl");
const a11y: string[] = [];
const RATE = 36; // cents per GPU-hour: a cent every 50 GPU-seconds, so figures read seconds apart agree to the cent

/** A tenant with a GPU type of its own on four nodes of four GPUs (nobody runs the agent: the walk beats for them), priced. */
async function world() {
  const cluster = await makeCluster();
  const gpuType = unique("T").replace(/-/g, "").slice(0, 10).toUpperCase();
  await db().gpuRate.create({ data: { gpuType, centsPerHour: RATE, effectiveFrom: new Date("2020-01-01"), createdBy: "walk" } });
  const agent = actorFor(agentPrincipal(cluster.id));
  // four, so the walk's work always finds GPUs of its type
  const nodes: Array<Awaited<ReturnType<typeof registerNode>>> = [];
  for (let i = 0; i < 4; i++)
    nodes.push(
      await registerNode(agent, {
        hostname: unique(`truth-${i}`),
        pod: "truth-pod",
        rack: `truth-rack-${i}`,
        capabilities: { containers: true, runtime: "docker test" },
        gpus: inventory(4, gpuType),
      }),
    );
  // and one node of a type of its own, for the walk's reservation (whatever the walk's other work is doing)
  const reservedType = unique("RS").replace(/-/g, "").slice(0, 10).toUpperCase();
  await db().gpuRate.create({
    data: { gpuType: reservedType, centsPerHour: RATE, effectiveFrom: new Date("2020-01-01"), createdBy: "walk" },
  });
  nodes.push(
    await registerNode(agent, {
      hostname: unique("truth-reserved"),
      pod: "truth-pod",
      rack: "truth-rack-r",
      capabilities: { containers: true, runtime: "docker test" },
      gpus: inventory(2, reservedType),
    }),
  );
  const beat = () => Promise.all(nodes.map((n) => recordHeartbeat(agent, n.node.id, {})));
  await beat();
  const tenant = await createTenant(systemActor, { name: unique("Truth Co"), gpu_quota: 16, billing_email: "ap@truth.test" });
  return { cluster, gpuType, reservedType, nodes: nodes.slice(0, 4).map((n) => n.node), beat, tenant, agent };
}

beforeAll(async () => {
  browser = await launchBrowser();
  w = await world();
  operator = await makeUser("operator");
  admin = await makeUser("tenant_admin", w.tenant.id);
  member = await makeUser("tenant_member", w.tenant.id);
});
afterAll(async () => {
  await browser?.close();
  expect(a11y).toEqual([]);
});

const signedIn = (target: string, user: { email: string; password: string }, width = 1440) =>
  openPage(browser, target, user, { width, height: width > 500 ? 1000 : 844 });
const operatorActor = actorFor({ kind: "operator", label: "walk" });
const asAdmin = () => actorFor({ kind: "tenant", tenantId: w.tenant.id, role: "tenant_admin", userId: admin.id, label: admin.email });

async function photograph(page: Page, name: string) {
  const dir = path.join(inject("artifactsDir"), "screenshots");
  const size = page.viewportSize()!;
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.setViewportSize({ width: 1440, height: 1000 });
  await page.screenshot({ path: path.join(dir, `truths-${name}-1440.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(dir, `truths-${name}-390.png`), fullPage: true });
  await page.setViewportSize(size);
  for (const v of await axeViolations(page)) a11y.push(`${name}: ${v}`);
}

/** A job of the walk's type placed now, its run moved `secondsAgo` into the past. */
async function running(name: string, gpus: number, secondsAgo: number) {
  // nobody runs the agent: the walk's heartbeat keeps its nodes online (they go offline after 90 s of silence)
  await w.beat();
  const job = await submitJob(asAdmin(), { name, gpu_count: gpus, gpu_type: w.gpuType, priority: 1, max_retries: 0 });
  await runSchedulerCycle("truths");
  await pool().query(`UPDATE jobs SET started_at = started_at - make_interval(secs => $2::int) WHERE id = $1 AND status = 'running'`, [
    job.id,
    secondsAgo,
  ]);
  expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("running");
  return job;
}

/** The colour a theme class gives text on this page (Tailwind's colours are oklch: compared as the browser computes them). */
const colourOf = (page: Page, cls: string) =>
  page.evaluate((c) => {
    const probe = document.createElement("span");
    probe.className = c;
    document.body.append(probe);
    const colour = getComputedStyle(probe).color;
    probe.remove();
    return colour;
  }, cls);

/** Cents from "$1,234.56". */
const cents = (text: string | null) => Math.round(Number((text ?? "").replace(/[$,]/g, "")) * 100);

describe("1. one definition per figure", () => {
  it("this month's money: billed and accruing agree on the operator's card and row, the tenant's pages and the API", async () => {
    const finished = await running(unique("billed"), 1, 3600);
    await finishJob(operatorActor, finished.id, { status: "completed" });
    // half an hour: not yet due for the meter's hourly segment, so it stays accruing while the walk reads
    const accruing = await running(unique("accruing"), 2, 1800);
    const key = (await makeKey({ scope: "tenant", tenant_id: w.tenant.id })).key;
    const fromApi = (await api("GET", `/api/tenants/${w.tenant.id}`, { key })).body.tenant;
    expect(fromApi.month.total_cents).toBe(fromApi.month.billed_cents + fromApi.month.accruing_cents);
    // an hour of 1 GPU billed (36 ¢), half an hour of 2 GPUs accruing (36 ¢)
    expect(fromApi.month.billed_cents).toBe(36);
    expect(fromApi.month.accruing_cents).toBeGreaterThanOrEqual(36);

    const ops = await signedIn("/admin/billing", operator);
    const row = ops.getByRole("table", { name: "Billing by tenant" }).locator("tr", { hasText: w.tenant.name });
    const cells = row.locator("td");
    expect(cents(await cells.nth(2).textContent())).toBe(fromApi.month.billed_cents);
    expect(Math.abs(cents(await cells.nth(3).textContent()) - fromApi.month.accruing_cents)).toBeLessThanOrEqual(1);
    await ops.getByRole("columnheader", { name: "Billed this month" }).waitFor();
    await ops.getByRole("columnheader", { name: "Accruing (running work)" }).waitFor();
    const card = ops.getByTestId("month-spend");
    expect(cents(await card.getByTestId("month-total").textContent())).toBe(
      cents(await card.getByTestId("month-billed").textContent()) + cents(await card.getByTestId("month-accruing").textContent()),
    );
    await photograph(ops, "operator-billing");
    // the operator's tenant page: the same two parts, its GPUs against its quota, what runs
    await ops.goto(`${base()}/admin/tenants/${w.tenant.id}`);
    const spend = ops.getByTestId("month-spend");
    expect(cents(await spend.getByTestId("month-billed").textContent())).toBe(fromApi.month.billed_cents);
    expect(Math.abs(cents(await spend.getByTestId("month-accruing").textContent()) - fromApi.month.accruing_cents)).toBeLessThanOrEqual(1);
    await ops.getByRole("table", { name: "Its running jobs" }).getByRole("link", { name: accruing.name }).waitFor();
    expect(await ops.getByTestId("gpus-in-use").getAttribute("data-total")).toBe(String(fromApi.gpu_in_use));
    await photograph(ops, "operator-tenant");
    await ops.context().close();

    const tenant = await signedIn("/dashboard/billing", admin);
    const own = tenant.getByTestId("month-spend");
    expect(cents(await own.getByTestId("month-billed").textContent())).toBe(fromApi.month.billed_cents);
    expect(Math.abs(cents(await own.getByTestId("month-accruing").textContent()) - fromApi.month.accruing_cents)).toBeLessThanOrEqual(1);
    await own.getByText("Accruing (running work)").waitFor();
    await tenant.goto(`${base()}/dashboard`);
    expect(cents(await tenant.getByTestId("month-spend").getByTestId("month-billed").textContent())).toBe(fromApi.month.billed_cents);
    await tenant.getByTestId("amount-due").getByText("Nothing to pay now").waitFor();
    await tenant.context().close();
  });

  it("GPUs in use: everything that holds a GPU, the same on every page and in the API, with the split", async () => {
    const key = (await makeKey({ scope: "tenant", tenant_id: w.tenant.id })).key;
    const t = (await api("GET", `/api/tenants/${w.tenant.id}`, { key })).body.tenant;
    const parts = t.gpu_in_use_by.jobs + t.gpu_in_use_by.endpoint_replicas + t.gpu_in_use_by.pods + t.gpu_in_use_by.reserved;
    expect(parts).toBe(t.gpu_in_use);
    const page = await signedIn("/dashboard", admin);
    const hints = new Set<string>();
    for (const p of ["/dashboard", "/dashboard/jobs", "/dashboard/pods", "/dashboard/endpoints", "/dashboard/reservations"]) {
      await page.goto(`${base()}${p}`);
      const stat = page.getByTestId("gpus-in-use");
      expect(await stat.getAttribute("data-total"), p).toBe(String(t.gpu_in_use));
      expect(await stat.textContent(), p).toContain(`${t.gpu_in_use} / 16`);
      hints.add((await stat.locator("p").last().textContent())!);
    }
    // one wording everywhere: the split, against the quota
    expect(hints.size).toBe(1);
    expect([...hints][0]).toContain(`${t.gpu_in_use_by.jobs} in jobs`);
    expect([...hints][0]).toMatch(/ · against your quota$/);
    await page.context().close();
  });

  it("a node's GPUs show their effective state, and its reservation", async () => {
    const busy = await db().gpu.findFirstOrThrow({ where: { nodeId: { in: w.nodes.map((n) => n.id) }, allocatedJobId: { not: null } } });
    const page = await signedIn(`/admin/nodes/${busy.nodeId}`, operator);
    const held = page.locator("[data-testid^=gpu-row-][data-state=held]");
    await held.first().waitFor();
    expect(await held.first().textContent()).not.toContain("available");
    await page
      .getByTestId("node-reservations")
      .getByText(/No reservation holds or books this node/)
      .waitFor();
    // in maintenance, the idle GPUs say why nothing starts on them
    const idleNode = w.nodes.find((n) => n.id !== busy.nodeId)!;
    await changeNodeStatus(operatorActor, idleNode.id, "maintenance", "walk");
    await page.goto(`${base()}/admin/nodes/${idleNode.id}`);
    const idle = page.locator("[data-testid^=gpu-row-][data-state=unavailable]");
    await idle.first().getByText("Nothing new starts: the node is in maintenance").waitFor();
    expect(await page.locator("[data-testid^=gpu-row-]").getByText("idle", { exact: true }).count()).toBe(0);
    await photograph(page, "node-maintenance");
    await changeNodeStatus(operatorActor, idleNode.id, "available", "walk over");
    await w.beat();
    await page.context().close();
  });

  it("charts label every tick differently and draw one unit per axis", async () => {
    const page = await signedIn("/admin/billing", operator);
    const tick = page.locator(".recharts-yAxis .recharts-cartesian-axis-tick-value");
    await tick.first().waitFor();
    const ticks = await tick.allTextContents();
    expect(ticks.length).toBeGreaterThan(1);
    expect(new Set(ticks).size).toBe(ticks.length);
    await page.context().close();
  });
});

/** Every named control of a form as it shows now: values of inputs and selects, ticks of checkboxes (never a password). */
const shown = (form: Locator) =>
  form.evaluate((f: HTMLFormElement) => {
    const out: Record<string, string> = {};
    for (const el of Array.from(f.elements) as Array<HTMLInputElement>) {
      if (!el.name || el.disabled || ["hidden", "submit", "button", "password"].includes(el.type)) continue;
      out[el.name] = el.type === "checkbox" ? String(el.checked) : el.value;
    }
    return out;
  });
/** Submits past the browser's own checks, so the server's refusal is what is seen. */
const submitUnchecked = async (form: Locator, button: string) => {
  await form.evaluate((f: HTMLFormElement) => (f.noValidate = true));
  await form.getByRole("button", { name: button }).click();
};
const refused = (form: Locator) => form.getByText("Check the highlighted fields.").waitFor();

describe("2. forms save what they show", () => {
  it("the alert-rule form: its type and fields survive a refusal, the saved rule is the one shown, and a success resets all of it", async () => {
    const page = await signedIn("/admin/alerts/rules", operator);
    const form = page.getByRole("form", { name: "Add rule" });
    const initial = await shown(form);
    await form.getByLabel("Type").selectOption("gpu_temperature");
    await form.getByLabel("Name").fill(unique("walk hot"));
    await form.getByLabel("Threshold").fill("hot");
    await form.getByLabel("Severity").selectOption("critical");
    const entered = await shown(form);
    expect(entered.rule_type).toBe("gpu_temperature");
    await submitUnchecked(form, "Add rule");
    await refused(form);
    expect(await shown(form)).toEqual(entered);
    // changing the type keeps the name (it used to clear it)
    await form.getByLabel("Type").selectOption("idle_allocation");
    expect((await shown(form)).name).toBe(entered.name);
    await form.getByLabel("Type").selectOption("gpu_temperature");
    await form.getByLabel("Threshold").fill("92");
    const sent = await shown(form);
    await form.getByRole("button", { name: "Add rule" }).click();
    await form.locator("[data-testid=form-message][data-ok=true]").waitFor();
    const rule = await db().alertRule.findFirstOrThrow({ where: { name: sent.name } });
    expect({
      name: rule.name,
      rule_type: rule.ruleType,
      threshold: String(rule.threshold),
      window_s: String(rule.windowS),
      occurrences: String(rule.occurrences),
      severity: rule.severity,
      enabled: String(rule.enabled),
      notify: String(rule.notify),
      auto_remediate: String(rule.autoRemediate),
      cluster_id: rule.clusterId ?? "",
    }).toEqual(sent);
    await expect.poll(() => shown(form)).toEqual(initial);
    await page.context().close();
  });

  it("the API-key form: a year's key is a year's key, and after it the form shows its default again", async () => {
    const page = await signedIn("/dashboard/api-keys", admin);
    const form = page.getByRole("form", { name: "Create API key" });
    const initial = await shown(form);
    expect(initial.expiry).toBe("90");
    // longer than a name may be (the input's own limit is bypassed, as a script would)
    await form.getByLabel("Name").evaluate((i: HTMLInputElement) => (i.value = "x".repeat(101)));
    await form.getByLabel("Expires").selectOption("365");
    const entered = await shown(form);
    await submitUnchecked(form, "Create key");
    await refused(form);
    expect(await shown(form)).toEqual(entered);
    const name = unique("walk-key");
    await form.getByLabel("Name").fill(name);
    await form.getByRole("button", { name: "Create key" }).click();
    await page.getByTestId("new-api-key").waitFor();
    const key = await db().apiKey.findFirstOrThrow({ where: { name } });
    const days = (key.expiresAt!.getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(364);
    expect(days).toBeLessThan(366);
    expect(await shown(form)).toEqual(initial);
    expect(await form.getByLabel("Expires").evaluate((s: HTMLSelectElement) => s.selectedOptions[0]!.text)).toBe("In 90 days");
    await page.context().close();
  });

  it("the job form: a refusal keeps every field (its GPU type too); the job saved is the one shown; a success resets it", async () => {
    const page = await signedIn("/dashboard/jobs", admin);
    const form = page.getByRole("form", { name: "Submit job" });
    const initial = await shown(form);
    const name = unique("walk-form-job");
    await form.getByLabel("Name").fill(name);
    await form.getByLabel("GPU type").selectOption(w.gpuType);
    await form.getByLabel("GPUs", { exact: true }).fill("1");
    await form.getByLabel("Priority").fill("0");
    await form.getByLabel("Duration (s)").fill("600");
    await form.getByLabel("Retries").fill("2");
    await form.getByLabel("Image").fill("nvcr.io/nvidia/pytorch:24.10-py3");
    await form.getByLabel("Command").fill("python train.py");
    const entered = await shown(form);
    await submitUnchecked(form, "Submit job");
    await refused(form);
    expect(await shown(form)).toEqual(entered);
    await form.getByLabel("Priority").fill("4");
    const sent = await shown(form);
    await form.getByRole("button", { name: /^Submit/ }).click();
    await form.locator("[data-testid=form-message][data-ok=true]").waitFor();
    const job = await db().job.findFirstOrThrow({ where: { tenantId: w.tenant.id, name } });
    expect({
      name: job.name,
      gpu_type: job.gpuType,
      gpu_count: String(job.gpuCount),
      priority: String(job.priority),
      duration_s: String(job.durationS),
      max_retries: String(job.maxRetries),
      image: job.image,
      command: job.command,
    }).toEqual(Object.fromEntries(Object.entries(sent).filter(([k]) => k !== "reservation_id")));
    await expect.poll(() => shown(form)).toEqual(initial);
    await page.context().close();
  });

  it("the endpoint form: a refusal keeps its choices (autoscaling too); the endpoint created is the one shown", async () => {
    const page = await signedIn("/dashboard/endpoints", admin);
    const form = page.getByRole("form", { name: "Create endpoint" });
    await form.getByLabel("Name").fill("Not A Valid Name!");
    await form.getByLabel("Model").fill("walk/model-7b");
    await form.getByLabel("GPU type").selectOption(w.gpuType);
    await form.getByLabel("GPUs per replica").fill("1");
    await form.getByLabel("Replicas", { exact: true }).fill("1");
    await form.getByLabel("SLA p95 (ms)").fill("700");
    await form.getByLabel("SLA availability (%)").fill("99.5");
    await form.getByLabel("Autoscaling").selectOption("p95_ms");
    await form.getByLabel("Target").fill("500");
    const entered = await shown(form);
    await form.getByRole("button", { name: "Create endpoint" }).click();
    await refused(form);
    expect(await shown(form)).toEqual(entered);
    const name = unique("walk-ep").toLowerCase();
    await form.getByLabel("Name").fill(name);
    const sent = await shown(form);
    await form.getByRole("button", { name: "Create endpoint" }).click();
    await page.waitForURL(/\/dashboard\/endpoints\/[0-9a-f-]{36}\?created=1$/, { timeout: 60_000 });
    const e = await db().endpoint.findFirstOrThrow({ where: { tenantId: w.tenant.id, name } });
    expect({
      name: e.name,
      model: e.model,
      gpu_type: e.gpuType,
      gpus_per_replica: String(e.gpusPerReplica),
      replicas: String(e.desiredReplicas),
      sla_p95_ms: String(e.slaP95Ms),
      sla_availability_pct: String(e.slaAvailabilityPct),
      autoscale_metric: e.autoscaleMetric,
      autoscale_target: String(e.autoscaleTarget),
    }).toEqual(Object.fromEntries(Object.entries(sent).filter(([k]) => !["min_replicas", "max_replicas", "cooldown_s"].includes(k))));

    // its settings: what is saved is what the form goes on showing, its autoscaling choice too
    const settings = page.getByRole("form", { name: "Endpoint settings" });
    await settings.locator('[name="sla_p95_ms"]').fill("650");
    await settings.locator('[name="autoscale_metric"]').selectOption("requests_per_replica");
    await settings.locator('[name="autoscale_target"]').fill("12");
    await settings.locator('[name="cooldown_s"]').fill("600");
    const sentSettings = await shown(settings);
    await settings.getByRole("button", { name: "Save changes" }).click();
    await settings.locator("[data-testid=form-message][data-ok=true]").waitFor();
    const after = await db().endpoint.findUniqueOrThrow({ where: { id: e.id } });
    expect({
      replicas: String(after.desiredReplicas),
      min_replicas: String(after.minReplicas),
      max_replicas: String(after.maxReplicas),
      sla_p95_ms: String(after.slaP95Ms),
      sla_availability_pct: String(after.slaAvailabilityPct),
      autoscale_metric: after.autoscaleMetric,
      autoscale_target: String(after.autoscaleTarget),
      cooldown_s: String(after.cooldownS),
    }).toEqual(sentSettings);
    await expect.poll(() => shown(settings)).toEqual(sentSettings);
    await page.context().close();
  });

  it("the tenant, user, cluster, rate, deposit and maintenance forms keep what was refused and save what they show", async () => {
    const page = await signedIn("/admin/tenants", operator);
    // a tenant
    const create = page.getByRole("form", { name: "Create tenant" });
    const initialTenant = await shown(create);
    const tenantName = unique("Walk Form Co");
    await create.locator('[name="name"]').fill(tenantName);
    await create.locator('[name="gpu_quota"]').fill("-4");
    await create.locator('[name="billing_email"]').fill("ap@walk.test");
    const enteredTenant = await shown(create);
    await submitUnchecked(create, "Create tenant");
    await refused(create);
    expect(await shown(create)).toEqual(enteredTenant);
    await create.locator('[name="gpu_quota"]').fill("12");
    await create.getByRole("button", { name: "Create tenant" }).click();
    await create.locator("[data-testid=form-message][data-ok=true]").waitFor();
    const t = await db().tenant.findFirstOrThrow({ where: { name: tenantName } });
    expect({ name: t.name, gpu_quota: String(t.gpuQuota), billing_email: t.billingEmail }).toEqual({ ...enteredTenant, gpu_quota: "12" });
    await expect.poll(() => shown(create)).toEqual(initialTenant);

    // its settings: what is saved is what the form goes on showing
    await page.goto(`${base()}/admin/tenants/${t.id}`);
    const edit = page.getByRole("form", { name: "Edit tenant" });
    await edit.locator('[name="gpu_quota"]').fill("16");
    await edit.locator('[name="max_priority"]').fill("3");
    const sentEdit = await shown(edit);
    await edit.getByRole("button", { name: "Save changes" }).click();
    await edit.locator("[data-testid=form-message][data-ok=true]").waitFor();
    const saved = await db().tenant.findUniqueOrThrow({ where: { id: t.id } });
    expect({
      name: saved.name,
      gpu_quota: String(saved.gpuQuota),
      billing_email: saved.billingEmail ?? "",
      max_priority: String(saved.maxPriority),
    }).toEqual(sentEdit);
    expect(await shown(edit)).toEqual(sentEdit);

    // a user of it: the role chosen is the role saved
    const user = page.getByRole("form", { name: "Add user" });
    const initialUser = await shown(user);
    await user.locator('[name="name"]').fill("Walk Person");
    await user.locator('[name="email"]').fill("not-an-address");
    await user.locator('[name="password"]').fill("a-long-walk-password");
    await user.locator('[name="role"]').selectOption("tenant_admin");
    const enteredUser = await shown(user);
    await submitUnchecked(user, "Add user");
    await refused(user);
    expect(await shown(user)).toEqual(enteredUser);
    const email = `${unique("walk")}@walk.test`;
    await user.locator('[name="email"]').fill(email);
    await user.locator('[name="password"]').fill("a-long-walk-password");
    await user.getByRole("button", { name: "Add user" }).click();
    await user.locator("[data-testid=form-message][data-ok=true]").waitFor();
    expect(await db().user.findUniqueOrThrow({ where: { email } })).toMatchObject({
      name: "Walk Person",
      role: "tenant_admin",
      tenantId: t.id,
    });
    await expect.poll(() => shown(user)).toEqual(initialUser);

    // a deposit
    const deposit = page.getByRole("form", { name: "Record deposit" });
    await deposit.locator('[name="amount"]').fill("twelve");
    await deposit.locator('[name="description"]').fill("walk transfer");
    const enteredDeposit = await shown(deposit);
    await deposit.getByRole("button", { name: "Record deposit" }).click();
    await refused(deposit);
    expect(await shown(deposit)).toEqual(enteredDeposit);
    await deposit.locator('[name="amount"]').fill("12.50");
    await deposit.getByRole("button", { name: "Record deposit" }).click();
    await deposit.getByText("$12.50 credited.").waitFor();
    expect(await db().ledgerEntry.findFirstOrThrow({ where: { tenantId: t.id, kind: "deposit" } })).toMatchObject({
      amountCents: 1250n,
      description: "walk transfer",
    });
    await expect.poll(() => shown(deposit)).toEqual({ amount: "", description: "" });

    // a cluster
    await page.goto(`${base()}/admin/clusters`);
    const cluster = page.getByRole("form", { name: "Register cluster" });
    const initialCluster = await shown(cluster);
    const clusterName = unique("walk-form-cluster");
    await cluster.locator('[name="name"]').fill(clusterName);
    await cluster.locator('[name="region"]').fill("x".repeat(300));
    await cluster.locator('[name="provider"]').fill("walk-dc");
    const enteredCluster = await shown(cluster);
    await submitUnchecked(cluster, "Register cluster");
    await refused(cluster);
    expect(await shown(cluster)).toEqual(enteredCluster);
    await cluster.locator('[name="region"]').fill("walk-1");
    await cluster.getByRole("button", { name: "Register cluster" }).click();
    await cluster.locator("[data-testid=form-message][data-ok=true]").waitFor();
    expect(await db().cluster.findFirstOrThrow({ where: { name: clusterName } })).toMatchObject({ region: "walk-1", provider: "walk-dc" });
    await expect.poll(() => shown(cluster)).toEqual(initialCluster);

    // a rate
    await page.goto(`${base()}/admin/billing`);
    const rate = page.getByRole("form", { name: "Set a rate" });
    const rateType = unique("R").replace(/-/g, "").slice(0, 8).toUpperCase();
    await rate.locator('[name="gpu_type"]').fill(rateType);
    await rate.locator('[name="price"]').fill("cheap");
    const enteredRate = await shown(rate);
    await rate.getByRole("button", { name: "Set rate" }).click();
    await refused(rate);
    expect(await shown(rate)).toEqual(enteredRate);
    await rate.locator('[name="price"]').fill("3.25");
    await rate.getByRole("button", { name: "Set rate" }).click();
    await rate.getByText(`${rateType} now costs $3.25 per GPU-hour.`).waitFor();
    expect((await db().gpuRate.findFirstOrThrow({ where: { gpuType: rateType } })).centsPerHour).toBe(325);
    await expect.poll(() => shown(rate)).toEqual({ gpu_type: "", price: "" });

    // a silence: its kind chosen is the kind saved
    const rule = await db().alertRule.findFirstOrThrow({ where: { name: { startsWith: "walk hot" } } });
    await page.goto(`${base()}/admin/alerts/silences`);
    const silence = page.getByRole("form", { name: "Create a silence or maintenance window" });
    const initialSilence = await shown(silence);
    await silence.locator('[name="kind"]').selectOption("silence");
    await silence.locator('[name="rule_id"]').selectOption(rule.id);
    await silence.locator('[name="reason"]').fill("x");
    const enteredSilence = await shown(silence);
    await submitUnchecked(silence, "Start silence");
    await refused(silence);
    expect(await shown(silence)).toEqual(enteredSilence);
    await silence.locator('[name="reason"]').fill("walk: known issue");
    await silence.getByRole("button", { name: "Start silence" }).click();
    await silence.locator("[data-testid=form-message][data-ok=true]").waitFor();
    expect(await db().alertSilence.findFirstOrThrow({ where: { reason: "walk: known issue" } })).toMatchObject({
      kind: "silence",
      ruleId: rule.id,
    });
    await expect.poll(() => shown(silence)).toEqual(initialSilence);
    await page.context().close();
  });
});

describe("3. SLA pages tell the truth", () => {
  it("an endpoint missing its latency target: each objective in colour with its own budget, a red headline, the window named", async () => {
    const e = await createEndpoint(asAdmin(), {
      name: unique("slow").toLowerCase(),
      model: "walk/slow",
      gpu_type: w.gpuType,
      gpus_per_replica: 1,
      replicas: 1,
      cluster_id: w.cluster.id,
      sla_availability_pct: 99,
      sla_p95_ms: 400,
      autoscale_metric: "none",
      cooldown_s: 300,
    });
    const replica = e.replicas[0]!;
    const sample = (at: number, p95: number) => ({
      replica_id: replica.id,
      recorded_at: new Date(at).toISOString(),
      requests: 600,
      errors: 0,
      p50_ms: 120,
      p95_ms: p95,
      p99_ms: p95 * 1.3,
      healthy: true,
    });
    await ingestEndpointMetrics(asAdmin(), e.id, [sample(Date.now(), 250)]);
    await reconcileEndpoints({ endpointId: e.id });
    // it has served for 30 minutes; its last five minutes were slow
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    await pool().query(`UPDATE endpoints SET created_at = $2 WHERE id = $1`, [e.id, new Date(minute - 31 * 60_000)]);
    await pool().query(`UPDATE endpoint_events SET created_at = $2 WHERE endpoint_id = $1`, [e.id, new Date(minute - 30 * 60_000)]);
    await ingestEndpointMetrics(
      asAdmin(),
      e.id,
      Array.from({ length: 30 }, (_, i) => sample(minute - (30 - i) * 60_000 + 5_000, i >= 25 ? 900 : 250)),
    );
    const page = await signedIn(`/dashboard/endpoints/${e.id}`, admin);
    const latency = page.getByTestId("slo-latency");
    const availability = page.getByTestId("slo-availability");
    await latency.waitFor();
    expect(await latency.getAttribute("data-verdict")).toBe("missed");
    expect(await availability.getAttribute("data-verdict")).toBe("met");
    // missed in red, met in green: the value and the badge (compared with the theme's own red and green)
    const red = await colourOf(page, "text-red-700");
    expect(await latency.locator("p.text-2xl").evaluate((el) => getComputedStyle(el).color)).toBe(red);
    expect(await latency.getByText("Missed").evaluate((el) => getComputedStyle(el).color)).toBe(red);
    expect(await availability.getByText("Met").evaluate((el) => getComputedStyle(el).color)).toBe(await colourOf(page, "text-emerald-700"));
    expect(await availability.locator("p.text-2xl").evaluate((el) => getComputedStyle(el).color)).not.toBe(red);
    // the latency objective has its own budget, overspent; availability's is whole
    await latency
      .getByTestId("slo-latency-budget")
      .getByText(/overspent by/)
      .waitFor();
    await availability.getByTestId("slo-availability-budget").getByText("100 % left").waitFor();
    // the headline says so, and which window: never a green "Ready"
    const headline = page.getByTestId("endpoint-headline");
    expect(await headline.getAttribute("data-tone")).toBe("red");
    await headline.getByText(/missing its SLA/).waitFor();
    await headline.getByText(/p95 within 400 ms in .* of minutes against 95 %/).waitFor();
    await page.getByText("SLA missed", { exact: true }).waitFor();
    // the alert's own box is never a green "no alert" over a window that misses: firing, or about to
    await expect
      .poll(
        async () =>
          (await page.getByText(/^SLA alert firing/).count()) +
          (await page.locator("[data-testid=sla-alert-box][data-tone=amber]").count()) +
          (await page.getByText(/No SLA alert rule is enabled/).count()),
      )
      .toBe(1);
    // a half-hour-old endpoint names the half hour, not a day; its charts open on the hour
    await page
      .getByTestId("sla-window")
      .getByText(/the \d+ min since it first served \(of last hour\)/)
      .waitFor();
    await page.getByRole("heading", { name: "Service level and traffic, last hour" }).waitFor();
    await photograph(page, "sla-missed");
    await page.goto(`${base()}/dashboard/endpoints`);
    await page
      .getByTestId(`endpoint-row-${e.name}`)
      .getByText(/^p95 missed \(\d+ min\)$/)
      .waitFor();
    await page.context().close();
  });
});

describe("4. dialogs, focus and keyboard", () => {
  it("cancelling a job asks in the product's dialog: named buttons, focus on the safe one, Tab kept inside, Escape keeps the job", async () => {
    const job = await running(unique("dialog"), 1, 60);
    const page = await signedIn(`/dashboard/jobs/${job.id}`, admin);
    await page.getByRole("button", { name: "Cancel", exact: true }).click();
    const dialog = page.getByRole("dialog", { name: `Cancel “${job.name}”?` });
    await dialog.getByRole("button", { name: "Keep running" }).waitFor();
    expect(await dialog.getByRole("button", { name: "Keep running" }).evaluate((b) => b === document.activeElement)).toBe(true);
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press("Tab");
      expect(await dialog.evaluate((d) => d.contains(document.activeElement))).toBe(true);
    }
    await page.keyboard.press("Shift+Tab");
    expect(await dialog.evaluate((d) => d.contains(document.activeElement))).toBe(true);
    await photograph(page, "cancel-dialog");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("running");
    // focus went back to the button that opened it
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Cancel");
    await page.getByRole("button", { name: "Cancel", exact: true }).click();
    await confirmInDialog(page, { confirm: "Cancel job", keep: "Keep running" });
    await expect.poll(async () => (await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("cancelled");
    await page.context().close();
  });

  it("the node-action dialog sits in the middle of the window", async () => {
    await w.beat();
    const page = await signedIn(`/admin/nodes/${w.nodes[0]!.id}`, operator);
    await page.getByRole("button", { name: "Maintenance…" }).click();
    const box = (await page.getByTestId("node-action-dialog").boundingBox())!;
    const view = page.viewportSize()!;
    expect(Math.abs(box.x + box.width / 2 - view.width / 2)).toBeLessThan(2);
    expect(Math.abs(box.y + box.height / 2 - view.height / 2)).toBeLessThan(2);
    await page.keyboard.press("Escape");
    await page.context().close();
  });

  it("primary and destructive buttons show a 2 px ring of their own when reached by keyboard", async () => {
    const page = await signedIn(`/admin/tenants/${w.tenant.id}`, operator);
    const ring = (l: Locator) =>
      l.evaluate((el) => {
        const s = getComputedStyle(el);
        return { style: s.outlineStyle, width: s.outlineWidth, color: s.outlineColor, background: s.backgroundColor };
      });
    // keyboard focus: from the field before each button, Tab
    await page.locator("form[aria-label='Record deposit'] input[name=description]").focus();
    await page.keyboard.press("Tab");
    const primary = page.getByRole("button", { name: "Record deposit" });
    expect(await primary.evaluate((b) => b === document.activeElement)).toBe(true);
    const p = await ring(primary);
    expect(p).toMatchObject({ style: "solid", width: "2px" });
    expect(p.color).not.toBe(p.background);
    expect(p.color).not.toMatch(/rgb\(255, 255, 255\)|rgba\(0, 0, 0, 0\)/);
    await page.getByRole("button", { name: "Suspend tenant" }).focus();
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Tab");
    const d = await ring(page.getByRole("button", { name: "Suspend tenant" }));
    expect(d).toMatchObject({ style: "solid", width: "2px" });
    expect(d.color).not.toMatch(/rgb\(255, 255, 255\)|rgba\(0, 0, 0, 0\)/);
    await page.context().close();
  });

  it("a page's main action is the first stop after skipping to the content", async () => {
    const page = await signedIn("/dashboard", admin);
    for (const [p, action] of [
      ["/dashboard", "Submit job"],
      ["/dashboard/jobs", "Submit a job"],
      ["/dashboard/endpoints", "Create an endpoint"],
    ] as const) {
      await page.goto(`${base()}${p}`);
      // the page's content streams in behind a skeleton, and React reveals it a moment after the
      // document has loaded: the walk starts once the action is there, as a person's would
      await page.getByText(action, { exact: true }).first().waitFor();
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
      await page.keyboard.press("Enter");
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.textContent), p).toBe(action);
    }
    await page.context().close();
  });
});

describe("5. paths that dead-ended", () => {
  it("an invoice's payment link is 'sent' only once an email left; a pending invoice shows how to pay; work in a reservation is 'covered'", async () => {
    const mails: string[] = [];
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      onData: (stream, _s, cb) => {
        let raw = "";
        stream.on("data", (c: Buffer) => (raw += c.toString()));
        stream.on("end", () => (mails.push(raw), cb()));
      },
    });
    await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", () => r()));
    const ops = await signedIn("/admin/settings", operator);
    try {
      // the operator's bank details, for tenants paying by transfer
      const bank = ops.locator("form[aria-label='Bank details']");
      await bank.locator("#f-account_name").fill("GPUForge Truth Ltd");
      await bank.getByRole("button", { name: "Save bank details" }).click();
      await bank.getByText("Bank details saved").waitFor();
      const channels = ops.locator("form[aria-label='Notification channels']");
      await channels.locator("#f-smtp_url").fill(`smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`);
      await channels.getByRole("button", { name: "Save channels" }).click();
      await channels.getByText("Notification channels saved").waitFor();
      // an invoice from the tenant's page, over whole days
      await ops.goto(`${base()}/admin/tenants/${w.tenant.id}`);
      const gen = ops.getByRole("form", { name: "Generate invoice" });
      await gen.locator('[name="first_day"]').fill(new Date(Date.now() - 86_400_000).toISOString().slice(0, 10));
      await gen.locator('[name="last_day"]').fill(new Date().toISOString().slice(0, 10));
      await gen.getByRole("button", { name: "Generate invoice" }).click();
      await ops.waitForURL(/\/admin\/billing\/invoices\/[0-9a-f-]{36}$/);
      const status = ops.getByTestId("payment-link-status");
      await expect
        .poll(
          async () => {
            await ops.reload();
            return status.getAttribute("data-state");
          },
          { timeout: 30_000 },
        )
        .toBe("sent");
      await status.getByText(/Payment link sent to ap@truth\.test by email/).waitFor();
      const invoiceId = ops.url().split("/").pop()!;
      // quoted-printable wraps long lines with "=" at their ends
      const unwrapped = mails.map((m) => m.replace(/=\r?\n/g, ""));
      expect(unwrapped.some((m) => m.includes("ap@truth.test") && m.includes(`/dashboard/billing/invoices/${invoiceId}`))).toBe(true);
      await photograph(ops, "invoice-sent");

      // the tenant pays by transfer: the operator's bank details, not "ask your operator"
      const tenant = await signedIn(`/dashboard/billing/invoices/${invoiceId}`, admin);
      const howToPay = tenant.getByRole("region", { name: "How to pay" });
      await howToPay.getByTestId("bank-transfer").waitFor();
      expect(await howToPay.textContent()).not.toContain("ask your operator");
      await tenant.context().close();
    } finally {
      await pool().query(`DELETE FROM platform_settings WHERE key = 'notifications.smtp_url'`);
      await new Promise<void>((r) => smtp.close(() => r()));
    }

    // work inside a reservation: its line names the reservation instead of charging $0.00
    const now = Date.now();
    await w.beat();
    const r = await createReservation(asAdmin(), {
      gpu_type: w.reservedType,
      node_count: 1,
      starts_at: new Date(now).toISOString(),
      ends_at: new Date(now + 3_600_000).toISOString(),
    });
    const inside = await submitJob(asAdmin(), {
      name: unique("inside"),
      gpu_count: 1,
      gpu_type: w.reservedType,
      priority: 1,
      max_retries: 0,
      reservation_id: r.id,
    });
    const outside = await running(unique("outside"), 1, 1200);
    await runSchedulerCycle("truths-covered");
    await pool().query(`UPDATE jobs SET started_at = started_at - interval '20 minutes' WHERE id = $1`, [inside.id]);
    await finishJob(operatorActor, inside.id, { status: "completed" });
    await finishJob(operatorActor, outside.id, { status: "completed" });
    const inv = await generateInvoice(operatorActor, w.tenant.id, {
      period_start: new Date(now - 3_600_000).toISOString(),
    });
    await ops.goto(`${base()}/admin/billing/invoices/${inv.id}`);
    const line = ops.locator("tr", { hasText: inside.name });
    await line.getByTestId("covered-line").getByText("covered by reservation").waitFor();
    expect(await line.textContent()).toContain(`covered by reservation ${r.id.slice(0, 8)}`);
    await photograph(ops, "invoice-covered");
    await ops.context().close();
  });
});

describe("6. lists and states", () => {
  it("unknown ids and addresses get the branded not-found page with HTTP 404, in the plane's shell", async () => {
    const other = await createTenant(systemActor, { name: unique("Other Co"), gpu_quota: 1, billing_email: null });
    const theirs = await submitJob(actorFor({ kind: "tenant", tenantId: other.id, role: "tenant_admin", label: "other" }), {
      name: unique("theirs"),
      gpu_count: 1,
      gpu_type: w.gpuType,
      priority: 5,
      max_retries: 0,
    });
    const missing = "00000000-0000-4000-8000-000000000000";
    const ops = await signedIn("/admin", operator);
    for (const [p, title] of [
      [`/admin/jobs/${missing}`, "No such job"],
      [`/admin/nodes/${missing}`, "No such node"],
      [`/admin/tenants/${missing}`, "No such tenant"],
      [`/admin/billing/invoices/${missing}`, "No such invoice"],
      [`/admin/endpoints/not-an-id`, "No such endpoint"],
      ["/admin/no/such/page", "This page does not exist"],
    ] as const) {
      const res = await ops.goto(`${base()}${p}`);
      expect(res!.status(), p).toBe(404);
      await ops.getByRole("heading", { name: title, level: 1 }).waitFor();
      await ops.getByRole("navigation", { name: "Operator pages" }).waitFor();
    }
    await photograph(ops, "not-found-operator");
    await ops.context().close();
    const tenant = await signedIn("/dashboard", admin);
    for (const [p, title] of [
      [`/dashboard/jobs/${theirs.id}`, "No such job"],
      [`/dashboard/pods/${missing}`, "No such pod"],
      [`/dashboard/billing/invoices/${missing}`, "No such invoice"],
    ] as const) {
      const res = await tenant.goto(`${base()}${p}`);
      expect(res!.status(), p).toBe(404);
      await tenant.getByRole("heading", { name: title, level: 1 }).waitFor();
    }
    await tenant.getByText(/belongs to another organisation/).waitFor();
    await tenant.context().close();
    // a member on an admins' page: a real 403 now that nothing streams before the check
    const m = await signedIn("/dashboard", member);
    expect((await m.goto(`${base()}/dashboard/users`))!.status()).toBe(403);
    await m.context().close();
    const anonymous = await fetch(`${base()}/no-such-page`);
    expect(anonymous.status).toBe(404);
    expect(await anonymous.text()).toContain("This page does not exist");
  });

  it("a scheduling cycle links the jobs it placed", async () => {
    await w.beat();
    const job = await submitJob(asAdmin(), { name: unique("cycled"), gpu_count: 1, gpu_type: w.gpuType, priority: 1, max_retries: 0 });
    const cycle = await runSchedulerCycle("truths-walk");
    const page = await signedIn("/admin/scheduler", operator);
    const row = page.getByTestId(`cycle-${cycle.id}`);
    await row.getByText(/placed, \d+ left waiting/).click();
    await row.getByRole("link", { name: job.name }).click();
    await page.waitForURL(`${base()}/admin/jobs/${job.id}`);
    await page.context().close();
  });

  it("on a phone, summary cards sit two to a row and a wide table keeps a row's status and actions in view", async () => {
    const job = await running(unique("phone"), 1, 60);
    const page = await signedIn("/dashboard/jobs?status=running", admin, 390);
    const cards = page.locator("main section").filter({ has: page.locator("p.uppercase") });
    const [a, b] = [(await cards.nth(0).boundingBox())!, (await cards.nth(1).boundingBox())!];
    expect(Math.abs(a.y - b.y)).toBeLessThan(2);
    expect(a.x + a.width).toBeLessThanOrEqual(b.x);
    const row = page.getByTestId(`job-row-${job.name}`);
    for (const what of [row.getByText("running", { exact: true }), row.getByRole("button", { name: "Cancel" })]) {
      const box = (await what.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(390);
    }
    await page.context().close();
  });
});
