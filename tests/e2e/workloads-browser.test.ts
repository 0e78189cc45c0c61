import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeViolations } from "../support/axe";
import { expectNotFound, launchBrowser, openPage, shot } from "../support/browser";
import { makeKey, makeTenant, makeUser } from "../support/fixtures";
import { startWalkFleet, type WalkFleet } from "../support/walk-fleet";
import { api } from "../support/http";

// A tenant follows its job on the node: the simulated fleet (the same HTTP API as real agents)
// runs the job's "container", ships its output in fenced chunks and reports its GPUs; the job page
// tails the log live and charts the GPUs the job held. Another tenant sees none of it.

let browser: Browser;
let fleet: WalkFleet;
let tenantUser: Awaited<ReturnType<typeof makeUser>>;
let otherUser: Awaited<ReturnType<typeof makeUser>>;
let tenantKey: string;

beforeAll(async () => {
  // B200: a GPU type no other walk uses, so this walk's work lands on its own simulated nodes
  fleet = await startWalkFleet({ gpuType: "B200", nodes: 1, sim: { outputEveryS: 1 } });
  const tenant = await makeTenant(16);
  tenantUser = await makeUser("tenant_admin", tenant.id);
  otherUser = await makeUser("tenant_admin", (await makeTenant(4)).id);
  tenantKey = (await makeKey({ scope: "tenant", tenant_id: tenant.id })).key;
  browser = await launchBrowser();
});

afterAll(async () => {
  await fleet?.stop();
  await browser?.close();
});

describe("a job's output and GPUs in the browser", () => {
  it("a tenant follows a running job's live log and the charts of the GPUs it holds; another tenant gets 404", async () => {
    const submitted = await api("POST", "/api/jobs", {
      key: tenantKey,
      body: {
        name: "follow-me",
        gpu_count: 2,
        gpu_type: "B200",
        image: "nvcr.io/nvidia/pytorch:24.05-py3",
        command: "python train.py --epochs 3",
        duration_s: 600,
      },
    });
    expect(submitted.status).toBe(201);
    const id = submitted.body.job.id as string;
    // the scheduler places it; the simulated node starts its container on the next heartbeat
    for (let i = 0; i < 100; i++) {
      const j = await api("GET", `/api/jobs/${id}`, { key: tenantKey });
      if (j.body.job.status === "running") break;
      await new Promise((r) => setTimeout(r, 200));
    }

    const page = await openPage(browser, `/dashboard/jobs/${id}`, tenantUser);
    await page.getByRole("heading", { name: "follow-me" }).waitFor();
    const log = page.getByRole("log", { name: /Output of Attempt 1 on sim-/ });
    await log.getByText("+ python train.py --epochs 3").waitFor({ timeout: 20_000 });
    await log.getByText(/step 1\/\d+/).waitFor({ timeout: 20_000 });
    // the tail reads on by itself: a later step shows up without a reload
    await log.getByText(/step 4\/\d+/).waitFor({ timeout: 30_000 });
    const steps = await log.getByText(/^step \d+\//).count();
    expect(steps).toBeGreaterThanOrEqual(4);
    // keyboard: the log is a focusable, named region
    await log.focus();
    expect(await page.evaluate(() => document.activeElement?.getAttribute("role"))).toBe("log");

    // the GPU charts fill in with the samples of the GPUs it holds (the page refreshes itself)
    const charts = page.getByRole("heading", { name: "GPUs this job held" }).locator("xpath=ancestor::section[1]");
    await charts.getByText("Utilization (%, UTC)").waitFor({ timeout: 30_000 });
    expect(await charts.getByRole("list", { name: "GPUs" }).getByRole("listitem").count()).toBe(2);
    await shot(page, "job-live-log-and-gpus");

    // the same through the API, in order and fenced per attempt
    const logs = await api("GET", `/api/jobs/${id}/logs?limit=500`, { key: tenantKey });
    expect(logs.status).toBe(200);
    expect(logs.body.attempt).toBe(1);
    const seqs = (logs.body.data as Array<{ seq: number }>).map((l) => l.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const telemetry = await api("GET", `/api/jobs/${id}/metrics`, { key: tenantKey });
    expect(telemetry.body.series).toHaveLength(2);

    // accessible, and usable on a phone
    expect(await axeViolations(page)).toEqual([]);
    const phone = await openPage(browser, `/dashboard/jobs/${id}`, tenantUser, { width: 390, height: 844 });
    await phone
      .getByRole("log")
      .getByText(/step \d+\//)
      .first()
      .waitFor({ timeout: 20_000 });
    await shot(phone, "job-live-log-phone");
    await phone.context().close();

    // another tenant learns nothing
    const other = await openPage(browser, `/dashboard/jobs/${id}`, otherUser);
    await expectNotFound(other, "job");
    expect(await other.getByRole("log").count()).toBe(0);
    await other.context().close();
    await page.context().close();
    // and the job is cancelled, so the walk leaves nothing running
    await api("PATCH", `/api/jobs/${id}`, { key: tenantKey, body: { status: "cancelled" } });
  });
});
