import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { submitJob } from "@/lib/jobs/submit-job";
import { axeViolations } from "../support/axe";
import { launchBrowser, openPage, shot } from "../support/browser";
import { availableFleet, makeTenant, makeUser, unique } from "../support/fixtures";

// The burst console in a real browser: the operator's providers page (offers with cost, our price
// and margin, a rented instance, the GPU-type mapping edited by keyboard), the tenant's burst
// setting (admin edits, member reads), a job's provider capacity card, provider spend on billing.
// The e2e app has no provider keys: what the pages show is seeded as a refresh and a cycle write it.

let browser: Browser;
let operator: Awaited<ReturnType<typeof makeUser>>;
let admin: Awaited<ReturnType<typeof makeUser>>;
let member: Awaited<ReturnType<typeof makeUser>>;
let tenantId = "";
let jobId = "";
const gpuName = `NVIDIA W${unique("w").slice(2)} 80GB HBM3`;

beforeAll(async () => {
  // the fleet has this GPU type but cannot run it now (its one node in maintenance): the job waits, as a burst job does
  const fleet = await availableFleet(1, 8, "WB");
  await db().node.update({ where: { id: fleet.nodes[0]!.node.id }, data: { status: "maintenance" } });
  const tenant = await makeTenant(16);
  tenantId = tenant.id;
  // the operator lets this tenant's admins turn burst on
  await db().tenant.update({ where: { id: tenantId }, data: { burstAllowed: true } });
  operator = await makeUser("operator");
  admin = await makeUser("tenant_admin", tenant.id);
  member = await makeUser("tenant_member", tenant.id);
  const now = new Date();
  await db().providerOffer.createMany({
    data: [
      {
        provider: "runpod",
        offerId: `US-KS-2|1x|od|${gpuName}`,
        providerGpuType: gpuName,
        gpuType: fleet.gpuType,
        gpuCount: 1,
        region: "US-KS-2",
        interruptible: false,
        costCentsPerGpuHour: 299,
        refreshedAt: now,
      },
      {
        provider: "runpod",
        offerId: `US-KS-2|1x|spot|${gpuName}`,
        providerGpuType: gpuName,
        gpuType: fleet.gpuType,
        gpuCount: 1,
        region: "US-KS-2",
        interruptible: true,
        costCentsPerGpuHour: 175,
        refreshedAt: now,
      },
      {
        provider: "vast",
        offerId: `${Date.now() % 1e7}`,
        providerGpuType: `Walk ${gpuName}`,
        gpuType: null,
        gpuCount: 2,
        region: "SE",
        interruptible: false,
        costCentsPerGpuHour: 256,
        refreshedAt: new Date(now.getTime() - 600_000),
      },
    ],
  });
  const job = await submitJob(systemActor, {
    tenant_id: tenant.id,
    name: "walk-burst",
    gpu_count: 1,
    gpu_type: fleet.gpuType,
    priority: 5,
    max_retries: 0,
    duration_s: 7200,
  });
  jobId = job.id;
  const cluster = await db().cluster.create({ data: { name: unique("burst-runpod-us-ks-2"), provider: "runpod", region: "US-KS-2" } });
  const node = await db().node.create({ data: { clusterId: cluster.id, hostname: unique("runpod"), status: "registered" } });
  const instance = await db().providerInstance.create({
    data: {
      provider: "runpod",
      region: "US-KS-2",
      offerId: `US-KS-2|1x|od|${gpuName}`,
      providerGpuType: gpuName,
      gpuType: fleet.gpuType,
      gpuCount: 1,
      interruptible: false,
      costCentsPerGpuHour: 299,
      priceCentsPerGpuHour: 374,
      clusterId: cluster.id,
      nodeId: node.id,
      tenantId: tenant.id,
      jobId: job.id,
      externalId: unique("pod"),
      status: "booting",
      launchedAt: new Date(now.getTime() - 2 * 60_000),
    },
  });
  await db().burstAttempt.createMany({
    data: [
      {
        jobId: job.id,
        tenantId: tenant.id,
        outcome: "capacity",
        provider: "vast",
        region: "US",
        offerId: "9101",
        message: "1× RTX 4090 on Vast.ai (US): launch: Instance type by id 9101 is not available. (no_such_ask)",
      },
      {
        jobId: job.id,
        tenantId: tenant.id,
        outcome: "launched",
        provider: "runpod",
        region: "US-KS-2",
        offerId: instance.offerId,
        instanceId: instance.id,
        priceCentsPerGpuHour: 374,
        message: `waited 312 s for local capacity; launching 1× ${gpuName} on RunPod (US-KS-2) at $3.74/GPU-hour, as node ${node.hostname}`,
      },
    ],
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe("burst in the browser", () => {
  it("the operator reads offers with prices and margins, the rented instance, and maps a GPU name by keyboard", async () => {
    const page = await openPage(browser, "/admin/providers", operator, { width: 1440, height: 1000 });
    await page.getByRole("heading", { name: "GPU providers", level: 1 }).waitFor();
    const offers = page.getByRole("table", { name: /Provider offers/ });
    // 299 × 1.25 = 373.75 → $3.74, margin $0.75; the spot offer 175 → 218.75 → $2.19
    await expect(
      offers
        .getByRole("row", { name: /on demand.*\$2\.99.*\$3\.74.*\$0\.75/ })
        .first()
        .isVisible(),
    ).resolves.toBe(true);
    await expect(
      offers
        .getByRole("row", { name: /interruptible.*\$1\.75.*\$2\.19/ })
        .first()
        .isVisible(),
    ).resolves.toBe(true);
    await expect(offers.getByText("unmapped").first().isVisible()).resolves.toBe(true);
    await expect(
      page
        .getByRole("table", { name: "Provider instances" })
        .getByRole("link", { name: jobId.slice(0, 8) })
        .isVisible(),
    ).resolves.toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, "providers-operator");

    // map the unmapped Vast name by keyboard only: focus its field, type, Enter
    const form = page.getByRole("form", { name: `Map Walk ${gpuName}` });
    await form.getByLabel("Our GPU type").focus();
    await page.keyboard.type("WALKX");
    await page.keyboard.press("Enter");
    await form.getByTestId("form-message").waitFor();
    await expect(form.getByTestId("form-message").textContent()).resolves.toMatch(/now counts as WALKX/);
    const row = await db().providerOffer.findFirstOrThrow({ where: { provider: "vast", providerGpuType: `Walk ${gpuName}` } });
    expect(row.gpuType).toBe("WALKX");
    await page.close();
  });

  it("a tenant admin turns burst on with a price cap by keyboard; a bad cap names the field; a member only reads it", async () => {
    const page = await openPage(browser, "/dashboard/billing", admin);
    const form = page.getByRole("form", { name: "Burst to GPU providers" });
    await form.waitFor();
    await form.getByLabel(/Price cap per GPU-hour/).fill("four dollars");
    await form.getByRole("checkbox", { name: /Burst to GPU providers/ }).check();
    await form.getByRole("button", { name: "Save burst setting" }).click();
    await form
      .getByText(/whole number of cents|Invalid input|expected number/i)
      .first()
      .waitFor();
    expect((await db().tenant.findUniqueOrThrow({ where: { id: tenantId } })).burstEnabled).toBe(false);
    await form.getByLabel(/Price cap per GPU-hour/).fill("4.50");
    await form.getByLabel(/Price cap per GPU-hour/).press("Enter");
    await form.getByText(/Burst is on: .* up to \$4\.50 per GPU-hour/).waitFor();
    expect(await db().tenant.findUniqueOrThrow({ where: { id: tenantId } })).toMatchObject({
      burstEnabled: true,
      burstMaxPriceCentsPerGpuHour: 450,
    });
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, "providers-tenant-burst");
    await page.close();

    const read = await openPage(browser, "/dashboard/billing", member);
    const f = read.getByRole("form", { name: "Burst to GPU providers" });
    await f.waitFor();
    await expect(f.getByRole("checkbox").isDisabled()).resolves.toBe(true);
    await expect(f.getByRole("button", { name: "Save burst setting" }).count()).resolves.toBe(0);
    await read.close();
  });

  it("the job page says why the job burst and where, every attempt, and its estimated cost", async () => {
    const page = await openPage(browser, `/dashboard/jobs/${jobId}`, admin);
    await page.getByRole("heading", { name: "Provider capacity" }).waitFor();
    await expect(page.getByText(/placed on rented capacity: RunPod \(US-KS-2\), 1 GPU at \$3\.74 per GPU-hour/).isVisible()).resolves.toBe(
      true,
    );
    const attempts = page.getByRole("list", { name: "Burst attempts" });
    await expect(attempts.getByRole("listitem").count()).resolves.toBe(2);
    // 2 hours declared at $3.74 per GPU-hour
    await expect(page.getByText("$7.48").isVisible()).resolves.toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, "providers-job");
    await page.close();
  });

  it("the operator sees provider spend on billing and rented nodes on the overview", async () => {
    const page = await openPage(browser, "/admin/billing", operator);
    const spend = page.getByRole("table", { name: "Provider spend this month" });
    await spend.waitFor();
    await expect(spend.getByRole("row", { name: /RunPod/ }).isVisible()).resolves.toBe(true);
    await shot(page, "providers-billing");
    await page.goto(page.url().replace("/admin/billing", "/admin"));
    const floor = page.getByRole("table", { name: "Nodes rented from GPU providers" });
    await floor.waitFor();
    await expect(floor.getByRole("link", { name: `job ${jobId.slice(0, 8)}` }).isVisible()).resolves.toBe(true);
    await page.close();
  });
});
