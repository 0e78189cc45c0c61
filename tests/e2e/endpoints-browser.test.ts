import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { db } from "@/lib/db/client";
import { confirmInDialog, launchBrowser, openPage, shot } from "../support/browser";
import { makeKey, makeTenant, makeUser } from "../support/fixtures";
import { startWalkFleet, type WalkFleet } from "../support/walk-fleet";
import { api } from "../support/http";

// Inference endpoints end to end: a tenant creates one in the browser, the simulated fleet
// (speaking only the HTTP API, like real agents) serves its replicas and reports their traffic,
// the page shows it ready with live charts; the operator sees the GPUs it holds.

let browser: Browser;
let fleet: WalkFleet;
let tenantUser: Awaited<ReturnType<typeof makeUser>>;
let operator: Awaited<ReturnType<typeof makeUser>>;
let tenantKey: string;

beforeAll(async () => {
  // H200: a GPU type no other walk uses, so this walk's work lands on its own simulated nodes
  fleet = await startWalkFleet({ gpuType: "H200", nodes: 2 });
  const tenant = await makeTenant(16);
  tenantUser = await makeUser("tenant_admin", tenant.id);
  tenantKey = (await makeKey({ scope: "tenant", tenant_id: tenant.id })).key;
  operator = await makeUser("operator");
  browser = await launchBrowser();
});

afterAll(async () => {
  await fleet?.stop();
  await browser?.close();
});

describe("inference endpoints in the browser", () => {
  it("a tenant creates an endpoint, sees it turn ready with live charts, the operator sees its GPUs", async () => {
    const page = await openPage(browser, "/dashboard/endpoints", tenantUser);
    await page.getByRole("heading", { name: "Inference endpoints" }).waitFor();
    await page.getByText("No inference endpoints yet").waitFor();
    await shot(page, "endpoints-empty");
    const form = page.locator("form[aria-label='Create endpoint']");
    await form.locator("#f-name").fill("chat-h200");
    await form.locator("#f-model").fill("meta-llama/Llama-3.1-8B-Instruct");
    await form.locator("#f-gpu_type").selectOption("H200");
    await form.locator("#f-replicas").fill("2");
    await form.locator("#f-max_replicas").fill("1");
    await form.locator("#f-sla_p95_ms").fill("500");
    await form.locator("#f-sla_availability_pct").fill("99.5");
    await form.getByRole("button", { name: "Create endpoint" }).click();
    // a field error names the bad bound and keeps what was typed
    await form.getByText("Must not be below replicas").waitFor();
    expect(await form.locator("#f-name").inputValue()).toBe("chat-h200");
    await form.locator("#f-max_replicas").fill("3");
    await form.locator("#f-autoscale_metric").selectOption("requests_per_replica");
    await form.locator("#f-autoscale_target").fill("50");
    await form.getByRole("button", { name: "Create endpoint" }).click();
    // creating renders the new endpoint's page in the same round trip: slow when the machine is busy
    await page.waitForURL(/\/dashboard\/endpoints\/[0-9a-f-]{36}\?created=1$/, { timeout: 60_000 });
    await page.getByRole("heading", { name: "chat-h200" }).waitFor();
    const id = new URL(page.url()).pathname.split("/").pop()!;
    // opened at its top, the title clear of the sticky header
    const titleTop = await page.getByRole("heading", { name: "chat-h200", level: 1 }).evaluate((h) => h.getBoundingClientRect().top);
    const headerBottom = await page
      .locator("header")
      .first()
      .evaluate((h) => h.getBoundingClientRect().bottom);
    expect(titleTop).toBeGreaterThanOrEqual(headerBottom);
    const availability = page.getByTestId("slo-availability");

    // the simulator loads the model, reports healthy samples; the page refreshes itself
    await page.getByText("2 of 2 replicas ready").first().waitFor({ timeout: 60_000 });
    await page.getByText("2 / 2").first().waitFor({ timeout: 15_000 });
    await page.locator(".recharts-surface").first().waitFor({ timeout: 30_000 });
    expect(await page.locator(".recharts-surface").count()).toBeGreaterThanOrEqual(2);
    await page.getByText("SLA p95").first().waitFor();
    // figures, the alert's own verdict and the list agree: served since it turned ready, no alert;
    // a young endpoint's figures name the minutes it has served, not the whole window
    await availability.getByText("100.00 %").waitFor({ timeout: 90_000 });
    expect(await availability.getAttribute("data-verdict")).toBe("met");
    expect(await page.getByTestId("slo-latency").getAttribute("data-verdict")).toMatch(/^(met|no data yet)$/);
    await page
      .getByTestId("sla-window")
      .getByText(/since it first served \(of last hour\)/)
      .waitFor();
    await page.getByText(/No SLA alert\. The rule/).waitFor();
    expect(await page.getByTestId("endpoint-headline").getAttribute("data-tone")).toBe("green");
    await shot(page, "endpoint-ready");
    // a fresh endpoint opens on the last hour in minutes (its data fits it); the picker asks for 24 h in 15-minute steps
    expect(await page.getByTestId("endpoint-traffic").getAttribute("data-step")).toBe("60");
    await page.getByRole("navigation", { name: "Time range" }).getByRole("link", { name: "24 h" }).click();
    await page.waitForURL(/range=24h/);
    await page.getByRole("heading", { name: "Requests per second, last 24 hours" }).waitFor();
    expect(await page.getByTestId("endpoint-traffic").getAttribute("data-step")).toBe("900");
    await shot(page, "endpoint-range-24h");

    // the API agrees: two ready replicas on distinct simulated nodes, samples stored and rolled up
    const got = await api("GET", `/api/endpoints/${id}`, { key: tenantKey });
    expect(got.body.endpoint).toMatchObject({ status: "ready", ready_replicas: 2, gpus_held: 2 });
    const nodes = got.body.endpoint.replica_list
      .filter((r: { status: string }) => r.status === "ready")
      .map((r: { node_id: string }) => r.node_id);
    expect(new Set(nodes).size).toBe(2);
    expect(await db().endpointMetricMinute.count({ where: { endpointId: id } })).toBeGreaterThan(0);
    const sla = await api("GET", `/api/endpoints/${id}/sla`, { key: tenantKey });
    expect(sla.status).toBe(200);
    expect(sla.body.sla.requests).toBeGreaterThan(0);

    // the page shows where to call it; a call through the inference gateway with the tenant's key is answered by a replica
    const url = (await page.getByLabel("Endpoint URL").textContent())!;
    expect(url).toBe(got.body.endpoint.url);
    expect(await page.getByTestId("gateway-curl").textContent()).toContain(`curl ${url}/v1/chat/completions`);
    const call = () =>
      fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${tenantKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "meta-llama/Llama-3.1-8B-Instruct", messages: [{ role: "user", content: "hello" }] }),
      });
    await expect.poll(async () => (await call()).status, { timeout: 20_000 }).toBe(200);
    const answer = (await (await call()).json()) as { choices: Array<{ message: { content: string } }> };
    expect(answer.choices[0]!.message.content.length).toBeGreaterThan(0);
    expect((await fetch(`${url}/v1/chat/completions`, { method: "POST", body: "{}" })).status).toBe(401);
    await shot(page, "endpoint-call-it");
    // a key for this endpoint alone, made on the page, shown once: it calls the endpoint; revoked, it no longer does
    const keyForm = page.locator("form[aria-label='Create endpoint key']");
    await keyForm.locator("#f-name").fill("chat-frontend");
    await keyForm.getByRole("button", { name: "Create key" }).click();
    const endpointKey = (await page.getByLabel("New endpoint key").textContent())!;
    expect(endpointKey).toMatch(/^gf_/);
    const withKey = () =>
      fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${endpointKey}`, "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
      });
    expect((await withKey()).status).toBe(200);
    await shot(page, "endpoint-key-created");
    await page.getByRole("table", { name: "Endpoint keys" }).getByRole("button", { name: "Revoke" }).click();
    await confirmInDialog(page, { confirm: "Revoke key", keep: "Keep key" });
    await page.getByRole("table", { name: "Endpoint keys" }).getByText("revoked").waitFor();
    await expect.poll(async () => (await withKey()).status, { timeout: 10_000 }).toBe(401);

    // scaling from the settings form applies at once
    const settings = page.locator("form[aria-label='Endpoint settings']");
    await settings.locator("#s-replicas").fill("3");
    await settings.getByRole("button", { name: "Save changes" }).click();
    await settings.getByText(/runs 3 replica/).waitFor();
    await page.getByText("scale up").first().waitFor();
    await page.goto(`${inject("baseUrl")}/dashboard/endpoints`);
    await page.getByRole("link", { name: "chat-h200" }).waitFor();
    // the list says how long the figures cover: the minutes this endpoint has served, not a day
    await page
      .getByTestId("endpoint-row-chat-h200")
      .getByText(/^100\.00 % up \(\d+ min\)$/)
      .waitFor();
    await shot(page, "endpoints-list");
    // the tenant's home page links its serving endpoints
    await page.goto(`${inject("baseUrl")}/dashboard`);
    await page.getByRole("link", { name: /Inference endpoints\s*1 serving/ }).waitFor();
    await shot(page, "tenant-home");
    await page.context().close();

    const admin = await openPage(browser, "/admin/endpoints", operator);
    await admin.getByRole("link", { name: "chat-h200" }).first().waitFor();
    await admin.getByRole("heading", { name: "GPUs held by replicas" }).waitFor();
    expect(await admin.locator("tr", { hasText: "chat-h200" }).count()).toBeGreaterThanOrEqual(3);
    await shot(admin, "endpoints-admin");
    await admin.context().close();

    // deleting it lands on the list, which says what happened
    const again = await openPage(browser, `/dashboard/endpoints/${id}`, tenantUser);
    await again.getByRole("button", { name: "Delete" }).click();
    await confirmInDialog(again, { confirm: "Delete endpoint", keep: "Keep endpoint" });
    await again.waitForURL(/\/dashboard\/endpoints\?deleted=chat-h200$/);
    await again.getByText("“chat-h200” deleted").waitFor();
    await again.context().close();
  });
});
