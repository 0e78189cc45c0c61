import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { db } from "@/lib/db/client";
import { launchBrowser, openPage, shot } from "../support/browser";
import { makeKey, makeTenant, makeUser } from "../support/fixtures";
import { startWalkFleet, type WalkFleet } from "../support/walk-fleet";
import { api } from "../support/http";

// The fleet pages with the simulator running: real agents' HTTP traffic, a real browser.

let browser: Browser;
let fleet: WalkFleet;
let operator: Awaited<ReturnType<typeof makeUser>>;
let clusterId: string;
let operatorKey: string;

beforeAll(async () => {
  operatorKey = (await makeKey({ scope: "operator" })).key;
  // L40S: a GPU type no other walk uses, so this walk's work lands on its own simulated nodes
  fleet = await startWalkFleet({ gpuType: "L40S", nodes: 4, racks: 2 });
  clusterId = fleet.cluster.id;
  browser = await launchBrowser();
  operator = await makeUser("operator");
  // a few rounds of reports, so there are metrics to draw
  await new Promise((r) => setTimeout(r, 3_000));
});

afterAll(async () => {
  await fleet?.stop();
  await browser?.close();
});

/** Polls `read` until `done` holds (background work runs on its own schedule). */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const signedInPage = (target: string, user: { email: string; password: string } = operator) => openPage(browser, target, user);

describe("fleet pages with the simulator running", () => {
  it("the simulated nodes registered, heartbeat and report through the public API", async () => {
    const nodes = await db().node.findMany({ where: { clusterId } });
    expect(nodes).toHaveLength(4);
    expect(nodes.every((n) => n.status === "available")).toBe(true);
    // at least one round of reports from every GPU (a loaded machine may take longer than the few seconds above)
    const metricRows = async () =>
      (
        (await db().$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM gpu_metrics m JOIN gpus g ON g.id = m.gpu_id JOIN nodes x ON x.id = g.node_id WHERE x.cluster_id = ${clusterId}::uuid`) as [
          { n: number },
        ]
      )[0].n;
    expect(await until(metricRows, (n) => n >= 32, 30_000)).toBeGreaterThanOrEqual(32);
    const dash = await api("GET", "/api/dashboard", { key: operatorKey });
    expect(dash.status).toBe(200);
    expect(dash.body.gpus_total).toBeGreaterThanOrEqual(32);
    expect(dash.body.gpus_allocated + dash.body.gpus_idle + dash.body.gpus_unhealthy).toBeLessThanOrEqual(dash.body.gpus_total);
    expect(dash.body).toEqual(
      expect.objectContaining({ jobs_queued: expect.any(Number), jobs_running: expect.any(Number), jobs_blocked: expect.any(Number) }),
    );
  });

  it("shows the fleet overview, the cluster and a node with live charts", async () => {
    const page = await signedInPage("/admin");
    await page.getByRole("heading", { name: "Fleet overview" }).waitFor();
    await page.getByText("Fleet floor").waitFor();
    const node = fleet.sim.nodes[0]!;
    // the floor streams in below the fold: a tile per rack, each a link to the rack's nodes
    const rack = page.locator(`a[href="/admin/clusters/${clusterId}/rack?${new URLSearchParams({ pod: node.pod, rack: node.rack })}"]`);
    await rack.waitFor();
    expect(await page.locator(`a[href^="/admin/clusters/${clusterId}/rack?"]`).count()).toBe(2);
    expect(await rack.getAttribute("title")).toMatch(new RegExp(`^Rack ${node.rack} in (\\S+ · )?${node.pod}: 2 nodes, 16 GPUs`)); // the cluster is named when the floor shows several
    await page.getByRole("list", { name: "Legend" }).getByText("unhealthy GPU").waitFor();
    await shot(page, "fleet-overview");

    // drill down by keyboard: the rack, then its node
    await rack.focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: `Rack ${node.rack}` }).waitFor();
    await page.getByRole("list", { name: `GPUs of ${node.hostname}` }).waitFor();
    await page.locator(`a[href="/admin/nodes/${node.id}"]`).waitFor();
    await shot(page, "fleet-rack");

    await page.goto(`${inject("baseUrl")}/admin/clusters/${clusterId}`);
    await page.getByRole("heading", { name: /Nodes \(4\)/ }).waitFor();
    await shot(page, "fleet-cluster");

    await page.locator(`a[href="/admin/nodes/${node.id}"]`).first().click();
    await page.getByRole("heading", { name: node.hostname }).waitFor();
    await page.getByText("GPU utilization, last hour").waitFor();
    expect(await page.locator(".recharts-surface").count()).toBeGreaterThan(0);
    await shot(page, "fleet-node");
    await page.context().close();
  });

  it("a fatal XID under a tenant's job: alert, automatic quarantine, the job moves, an operator returns the node", async () => {
    // a tenant's 8-GPU job on one of the simulated nodes
    const tenant = await makeTenant(8);
    const tenantUser = await makeUser("tenant_admin", tenant.id);
    const { key: tenantKey } = await makeKey({ scope: "tenant", tenant_id: tenant.id });
    const submitted = await api("POST", "/api/jobs", {
      key: tenantKey,
      body: { name: "llama-finetune", gpu_count: 8, gpu_type: "L40S", cluster_id: clusterId, duration_s: 3600 },
    });
    expect(submitted.status).toBe(201);
    const jobId = submitted.body.job.id as string;
    const placed = await until(
      async () => (await api("GET", `/api/jobs/${jobId}`, { key: tenantKey })).body.job,
      (j) => j.status === "running",
    );
    const node = fleet.sim.nodes.find((n) => n.id === placed.node_ids[0])!;

    fleet.sim.injectFault(node.hostname, "xid79", 3);
    await fleet.sim.reportNow(node.hostname);
    const gpu = await db().gpu.findFirstOrThrow({ where: { nodeId: node.id!, index: 3 } });
    expect(gpu).toMatchObject({ status: "unhealthy", unhealthyReason: "fatal_xid:79" });
    // nobody touches anything: the platform quarantines the node and moves the job
    await until(
      () => db().node.findUniqueOrThrow({ where: { id: node.id! } }),
      (n) => n.status === "quarantined",
      15_000,
    );
    const remediation = await db().remediation.findFirstOrThrow({ where: { nodeId: node.id! } });
    expect(remediation).toMatchObject({ outcome: "quarantined", cause: "fatal_xid:79", jobsRequeued: 1 });
    const moved = await until(
      async () => (await api("GET", `/api/jobs/${jobId}`, { key: tenantKey })).body.job,
      (j) => j.status === "running",
      15_000,
    );
    expect(moved.node_ids).not.toContain(node.id);
    expect(moved.failures).toBe(0);

    const page = await signedInPage(`/admin/alerts`);
    const row = page.locator("tr", { hasText: `XID 79 (GPU has fallen off the bus) on ${node.hostname} GPU 3` }).first();
    await row.waitFor();
    await row.getByRole("button", { name: "Acknowledge" }).click();
    await row.getByText(/Taken by/).waitFor();
    await shot(page, "alerts-firing");
    await page.getByRole("link", { name: "Remediations" }).click();
    await page.locator("tr", { hasText: node.hostname }).getByText("quarantined").waitFor();
    await shot(page, "alerts-remediations");
    await page.getByRole("link", { name: "Notifications" }).click();
    await page.getByRole("heading", { name: "Notifications" }).waitFor();
    await page.getByText(`[GPUForge] FIRING critical: Fatal XID on a GPU — ${node.hostname} GPU 3`).first().waitFor();
    await shot(page, "alerts-notifications");
    // the rules editor names a knob out of range for the type, and keeps what was typed
    await page.getByRole("link", { name: "Rules" }).click();
    await page.getByRole("cell", { name: /Fatal XID on a GPU/ }).waitFor();
    const form = page.locator("form[aria-label='Add rule']");
    await form.locator("#f-name").fill("Idle L40S capacity");
    await form.locator("#f-rule_type").selectOption("idle_gpu");
    await form.locator("#f-threshold").fill("400");
    await form.getByRole("button", { name: "Add rule" }).click();
    await form.getByText("Must be between 1 and 100").waitFor();
    expect(await form.locator("#f-name").inputValue()).toBe("Idle L40S capacity");
    await form.locator("#f-threshold").fill("60");
    await form.getByRole("button", { name: "Add rule" }).click();
    await form.getByText("Rule “Idle L40S capacity” added.").waitFor();
    await page.getByRole("link", { name: "Idle L40S capacity" }).waitFor();
    await shot(page, "alerts-rules");

    // heartbeats keep coming, and do not bring it back
    await fleet.sim.reportNow(node.hostname);
    expect((await db().node.findUniqueOrThrow({ where: { id: node.id! } })).status).toBe("quarantined");

    // the tenant sees why its job moved
    const tenantPage = await signedInPage("/dashboard/alerts", tenantUser);
    await tenantPage
      .getByText(/Job llama-finetune was moved off node/)
      .first()
      .waitFor();
    await shot(tenantPage, "tenant-alerts");
    await tenantPage.context().close();

    // after inspection, an operator returns the node to service from its page
    await page.goto(`${inject("baseUrl")}/admin/nodes/${node.id}`);
    await page.getByText("XID 79 — GPU has fallen off the bus").waitFor();
    await page.getByRole("button", { name: "Return to service…" }).click();
    const confirm = page.getByRole("dialog");
    await confirm.getByText("Its GPUs' hardware flags (XID, ECC) are cleared").waitFor();
    await confirm.locator("#node-reason").fill("GPU 3 reseated and tested");
    await confirm.getByRole("button", { name: "Return to service" }).click();
    await page.getByText(`${node.hostname} is now available.`).waitFor();
    expect((await db().gpu.findUniqueOrThrow({ where: { id: gpu.id } })).status).toBe("available");
    const events = await db().nodeEvent.findMany({ where: { nodeId: node.id! }, orderBy: { id: "asc" } });
    expect(events.map((e) => [e.toStatus, e.actor])).toEqual([
      ["available", expect.any(String)],
      ["quarantined", "remediation"],
      ["available", operator.email],
    ]);
    // the alert resolves by itself at the next evaluation
    const alert = await db().alertEvent.findFirstOrThrow({ where: { ruleType: "gpu_xid", nodeId: node.id! } });
    await until(
      () => db().alertEvent.findUniqueOrThrow({ where: { id: alert.id } }),
      (a) => a.status === "resolved",
      40_000,
    );
    await page.context().close();
  });

  it("serves a GPU's series over the API from what the simulator reported", async () => {
    const gpuId = fleet.sim.nodes[0]!.gpus[0]!.id!;
    const series = await api("GET", `/api/gpus/${gpuId}/metrics?step=1`, { key: operatorKey });
    expect(series.status).toBe(200);
    expect(series.body.source).toBe("raw");
    expect(series.body.points.length).toBeGreaterThan(0);
    expect(series.body.points[0].temperature_avg_c).toBeGreaterThan(20);
  });

  it("answers 413 for more than 5,000 samples in one request", async () => {
    const { key } = await makeKey({ scope: "agent", cluster_id: clusterId });
    const metrics = Array.from({ length: 5_001 }, () => ({
      gpu_uuid: "x",
      utilization_pct: 1,
      memory_used_mb: 1,
      temperature_c: 1,
      power_draw_w: 1,
    }));
    const r = await api("POST", "/api/clusters/metrics", { key, body: { metrics } });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe("payload_too_large");
  });
});

describe("jobs in the tenant plane with the simulator running", () => {
  it("a tenant submits a job, sees it running with its GPUs, then completed, with its timeline", async () => {
    const tenant = await makeTenant(16);
    const admin = await makeUser("tenant_admin", tenant.id);
    const page = await (await browser.newContext({ viewport: { width: 1400, height: 1000 } })).newPage();
    await page.goto(`${inject("baseUrl")}/login?callbackUrl=/dashboard/jobs`);
    await page.fill("#f-email", admin.email);
    await page.fill("#f-password", admin.password);
    await page.click("form[aria-label='Sign in'] button[type=submit]");
    await page.waitForURL(`${inject("baseUrl")}/dashboard/jobs`);

    // bad input first: the server names the field
    await page.fill("#f-name", "too-big");
    await page.selectOption("#f-gpu_type", "L40S");
    await page.fill("#f-gpu_count", "17");
    await page.click("form[aria-label='Submit job'] button[type=submit]");
    await page.locator("#f-gpu_count-error").waitFor();
    expect(await page.locator("#f-gpu_count-error").textContent()).toMatch(/quota/);

    await page.fill("#f-name", "walk-finetune");
    await page.fill("#f-gpu_count", "4");
    await page.fill("#f-duration_s", "12");
    await page.click("form[aria-label='Submit job'] button[type=submit]");
    const row = page.getByTestId("job-row-walk-finetune");
    await row.waitFor();
    await row.getByText("running").waitFor({ timeout: 20_000 });
    await shot(page, "jobs-running");
    await row.getByText("completed").waitFor({ timeout: 45_000 });
    await row.getByRole("link", { name: "walk-finetune" }).click();
    await page.getByRole("heading", { name: "Timeline" }).waitFor();
    await shot(page, "job-detail");
    const job = await db().job.findFirstOrThrow({ where: { tenantId: tenant.id, name: "walk-finetune" } });
    const events = await db().jobEvent.findMany({ where: { jobId: job.id }, orderBy: { id: "asc" } });
    expect(events.map((e) => e.toStatus)).toEqual(["queued", "running", "completed"]);
    expect(await db().gpu.count({ where: { allocatedJobId: job.id } })).toBe(0);
    await page.context().close();
  });
});
