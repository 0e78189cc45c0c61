import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { demoSshKey } from "@/agent/src/demo-workload";
import { db } from "@/lib/db/client";
import { confirmInDialog, launchBrowser, openPage, shot } from "../support/browser";
import { makeKey, makeTenant, makeUser } from "../support/fixtures";
import { startWalkFleet, type WalkFleet } from "../support/walk-fleet";

// Pods end to end: a tenant creates one in the browser, the simulated fleet (speaking only the
// HTTP API, like real agents) runs it with real listeners on its node's address, the page shows it
// running with its SSH command and the gateway address of its port, then the tenant stops and
// terminates it.

let browser: Browser;
let tenantId: string;
let fleet: WalkFleet;
let tenantUser: Awaited<ReturnType<typeof makeUser>>;
let operator: Awaited<ReturnType<typeof makeUser>>;

beforeAll(async () => {
  // GH200: a GPU type no other walk uses, so this walk's pod lands on its own simulated node
  fleet = await startWalkFleet({ gpuType: "GH200", nodes: 1 });
  const tenant = await makeTenant(16);
  tenantId = tenant.id;
  tenantUser = await makeUser("tenant_admin", tenant.id);
  operator = await makeUser("operator");
  browser = await launchBrowser();
});

afterAll(async () => {
  await fleet?.stop();
  await browser?.close();
});

describe("pods in the browser", () => {
  it("a tenant creates a pod, sees it running with its SSH command and port, stops and terminates it; the operator sees it", async () => {
    const page = await openPage(browser, "/dashboard/pods", tenantUser);
    await page.getByRole("heading", { name: "Pods", level: 1 }).waitFor();
    await page.getByText("No pods yet").waitFor();
    await shot(page, "pods-empty");

    const form = page.locator("form[aria-label='Create pod']");
    await form.locator("#f-name").fill("notebook");
    await form.locator("#f-gpu_type").selectOption("GH200");
    await form.locator("#f-gpu_count").fill("2");
    await form.locator("#f-image").fill("runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04");
    await form.locator("#f-ports").fill("8888");
    // a key with an options prefix would become more than a key: refused, naming the field, keeping the rest
    await form.locator("#f-ssh_public_key").fill(`command="sh" ${demoSshKey("walk")}`);
    await form.getByRole("button", { name: "Create pod" }).click();
    await form.locator("#f-ssh_public_key-error").waitFor();
    expect(await form.locator("#f-name").inputValue()).toBe("notebook");
    await shot(page, "pods-create-field-error");
    await form.locator("#f-ssh_public_key").fill(demoSshKey("walk"));
    await form.getByRole("button", { name: "Create pod" }).click();
    // creating renders the new pod's page in the same round trip: slow when the machine is busy
    await page.waitForURL(/\/dashboard\/pods\/[0-9a-f-]{36}\?created=1$/, { timeout: 60_000 });
    const id = new URL(page.url()).pathname.split("/").pop()!;
    await page.getByRole("heading", { name: "notebook", level: 1 }).waitFor();

    // the simulator's node starts the container, publishes 22 and 8888 and reports them; the page refreshes itself
    const ssh = page.getByLabel("SSH command");
    await ssh.waitFor({ timeout: 90_000 }); // a scheduling cycle, a heartbeat and a page refresh: long when the soak shares the machine
    const command = (await ssh.textContent())!;
    // SSH for the key, with a tunnel to the notebook port
    expect(command).toMatch(/^ssh root@127\.\d+\.\d+\.\d+ -p \d{4,5} -L 8888:localhost:8888$/);
    // the notebook port answers the gateway only: the page gives its gateway address, which a key of the tenant opens
    const viaGateway = page.getByLabel("Port 8888 through the gateway");
    await viaGateway.waitFor();
    const line = (await viaGateway.textContent())!;
    const url = /(https?:\/\/\S+\/v1\/pods\/[0-9a-f-]{36}\/ports\/8888\/)$/.exec(line)?.[1];
    expect(url, line).toBe(`${inject("baseUrl")}/v1/pods/${id}/ports/8888/`);
    const { key } = await makeKey({ scope: "tenant", tenant_id: tenantId });
    expect(await (await fetch(url!, { headers: { authorization: `Bearer ${key}` } })).text()).toContain("Simulated pod notebook");
    expect((await fetch(url!)).status).toBe(401);
    await page.locator("[data-testid='pod-actions']").getByText("running", { exact: true }).waitFor();
    await page.getByRole("list", { name: "Status history" }).getByText("its container is running").waitFor();
    // the "placed at the next cycle" note of its creation is gone once it runs
    expect(await page.getByText(/placed on free GPUs at the next scheduling cycle/).count()).toBe(0);
    await page.getByText("Run 1 on").first().waitFor();
    await shot(page, "pod-running");

    // stop: GPUs released, billing stopped at once
    await page.getByRole("button", { name: "Stop" }).click();
    await confirmInDialog(page, { confirm: "Stop pod", keep: "Keep running" });
    await page
      .locator("[data-testid='pod-actions']")
      .getByText(/^(stopping|stopped)$/)
      .waitFor({ timeout: 15_000 });
    await page.locator("[data-testid='pod-actions']").getByText("stopped", { exact: true }).waitFor({ timeout: 30_000 });
    expect(await db().gpu.count({ where: { allocatedPodId: id } })).toBe(0);
    await expect
      .poll(async () => (await db().podPlacement.findFirstOrThrow({ where: { podId: id, attempt: 1 } })).endedAt !== null)
      .toBe(true);
    await page.getByRole("button", { name: "Start" }).waitFor();
    await shot(page, "pod-stopped");

    // terminate: final
    await page.getByRole("button", { name: "Terminate" }).click();
    await confirmInDialog(page, { confirm: "Terminate pod", keep: "Keep pod" });
    await page.locator("[data-testid='pod-actions']").getByText("terminated", { exact: true }).waitFor({ timeout: 15_000 });
    expect(await page.getByRole("button", { name: "Start" }).count()).toBe(0);
    const events = await db().podEvent.findMany({ where: { podId: id }, orderBy: { id: "asc" }, select: { toStatus: true } });
    expect(events.map((e) => e.toStatus)).toEqual(["pending", "starting", "running", "stopping", "stopped", "terminated"]);

    // the operator's view lists it with its tenant
    const admin = await openPage(browser, "/admin/pods?status=terminated", operator);
    await admin.getByRole("heading", { name: "Pods", level: 1 }).waitFor();
    await admin.locator("[data-testid='pod-row-notebook']").first().waitFor();
    await shot(admin, "admin-pods");
  }, 240_000);
});
