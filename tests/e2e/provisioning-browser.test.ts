import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { db } from "@/lib/db/client";
import { axeViolations } from "../support/axe";
import { launchBrowser, openPage, shot } from "../support/browser";
import { makeKey, makeTenant, makeUser } from "../support/fixtures";
import { api } from "../support/http";
import { startWalkFleet, type WalkFleet } from "../support/walk-fleet";

// A node provisioned through its BMC from the node page, with the simulator's nodes and their
// simulated BMCs (agent/src/sim-bmc-fleet.ts): the BMC stored through the form, the node taken out
// of service, provisioned from an image by the server's background runner, its agent back and the
// node on to inspection; a second node whose BMC refuses the password fails, quarantined with an
// alert; the power dialog by keyboard; and a tenant who never sees any of it.

let browser: Browser;
let fleet: WalkFleet;
let operator: Awaited<ReturnType<typeof makeUser>>;
let operatorKey: string;
const IMAGE = "http://images.example/gpuforge-node-2026.12.iso";
/** the pages stream and re-render (the node page refreshes itself): give them time on a loaded machine */
const WAIT = { timeout: 15_000 };

beforeAll(async () => {
  operatorKey = (await makeKey({ scope: "operator" })).key;
  // B200: a GPU type no other walk uses, so this walk's nodes are its own
  fleet = await startWalkFleet({
    gpuType: "B200",
    nodes: 2,
    sim: { bmc: { password: "walk-bmc-password", timing: { powerMs: 300, bootMs: 1_500, taskMs: 1_200 } } },
  });
  browser = await launchBrowser();
  operator = await makeUser("operator");
});

afterAll(async () => {
  await fleet?.stop();
  await browser?.close();
});

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms: ${JSON.stringify(v).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

const nodeOf = async (hostname: string) => db().node.findFirstOrThrow({ where: { hostname }, select: { id: true, status: true } });
const simBmc = (i: number) => fleet.sim.bmcs()[i]!;

async function reloadUntil(page: Page, done: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error("the page did not show it in time");
    await new Promise((r) => setTimeout(r, 1_000));
    await page.reload();
  }
}

describe("provisioning a node from its page", () => {
  it("stores the BMC through the form, provisions from an image, and shows every step with its Redfish requests", async () => {
    const b = simBmc(0);
    const node = await nodeOf(b.hostname);
    const page = await openPage(browser, `/admin/nodes/${node.id}`, operator);
    const section = page.locator("#provisioning");
    await shot(page, "provisioning-01-no-bmc");
    await expect.poll(() => section.getByText("No BMC stored for this node yet.").isVisible(), WAIT).toBe(true);

    // an http BMC without saying "do not verify" is refused, naming the field
    await page.fill("#bmc-url", b.url);
    await page.fill("#bmc-username", b.username);
    await page.fill("#bmc-password", b.password);
    await page.press("#bmc-password", "Enter");
    await expect.poll(() => page.locator("#bmc-verify_tls-error").textContent(), WAIT).toContain("no certificate to verify");
    await page.selectOption("#bmc-verify_tls", "false");
    await page.fill("#bmc-password", b.password);
    await page.press("#bmc-password", "Enter");
    await expect.poll(() => section.getByTestId("form-message").first().textContent(), WAIT).toContain("Stored the BMC");
    await page.reload();
    await expect.poll(() => section.locator("dd").first().textContent(), WAIT).toBe(b.url);
    expect(await page.content()).not.toContain(b.password);

    // out of service first, then provision (the form says why not while it cannot)
    await expect
      .poll(() => section.locator("#provision-image_url-hint").textContent(), WAIT)
      .toContain("provisioning starts from maintenance or quarantine");
    expect(
      (await api("PATCH", `/api/nodes/${node.id}`, { key: operatorKey, body: { status: "maintenance", reason: "reimage" } })).status,
    ).toBe(200);
    await page.reload();
    await page.fill("#provision-image_url", IMAGE);
    await page.press("#provision-image_url", "Enter");
    await expect.poll(() => section.getByTestId("form-message").last().textContent(), WAIT).toContain("Provisioning started");
    await shot(page, "provisioning-02-started");

    // the server's runner carries it out; the simulated node boots the image and its agent comes back
    await until(
      async () => (await api("GET", `/api/nodes/${node.id}/provisioning`, { key: operatorKey })).body.provisioning?.phase,
      (s) => s === "inspection",
      90_000,
    );
    await page.reload();
    const latest = page.getByTestId("provisioning-latest");
    await expect.poll(() => latest.locator("li[data-status=succeeded]").count(), WAIT).toBe(7);
    expect(await latest.textContent()).toContain("the node is being inspected (attestation)");
    // open the image step's requests: the 202 task and its monitor are there
    const insert = latest.locator("li[data-step=insert_media]");
    await insert.locator("summary").first().click();
    await expect.poll(() => insert.locator("table").textContent(), WAIT).toContain("/TaskMonitors/");
    await shot(page, "provisioning-03-succeeded");
    expect((await nodeOf(b.hostname)).status).toBe("inspecting");
    expect(await axeViolations(page)).toEqual([]);
  });

  it("a BMC that refuses the password fails the provisioning: the node is quarantined and the alert says why", async () => {
    const b = simBmc(1);
    const node = await nodeOf(b.hostname);
    expect(
      (
        await api("PUT", `/api/nodes/${node.id}/bmc`, {
          key: operatorKey,
          body: { url: b.url, username: b.username, password: "not-it", verify_tls: false },
        })
      ).status,
    ).toBe(200);
    expect(
      (await api("PATCH", `/api/nodes/${node.id}`, { key: operatorKey, body: { status: "maintenance", reason: "reimage" } })).status,
    ).toBe(200);
    expect((await api("POST", `/api/nodes/${node.id}/provision`, { key: operatorKey, body: { image_url: IMAGE } })).status).toBe(202);
    await until(
      async () => (await nodeOf(b.hostname)).status,
      (s) => s === "quarantined",
    );
    const page = await openPage(browser, `/admin/nodes/${node.id}`, operator);
    const latest = page.getByTestId("provisioning-latest");
    await reloadUntil(page, async () => (await latest.locator("li[data-status=failed]").count()) === 1);
    expect(await latest.textContent()).toContain("BMC credentials refused");
    expect(await page.textContent("body")).toContain("Provisioning failed");
    await shot(page, "provisioning-04-failed");
    expect(await axeViolations(page)).toEqual([]);
  });

  it("the power dialog works by keyboard and returns focus where it was", async () => {
    // the second node's provisioning ended (it failed): power is the operator's again (while a workflow
    // runs, power is refused: tests/e2e/bmc-provisioning.test.ts)
    const node = await nodeOf(simBmc(1).hostname);
    const page = await openPage(browser, `/admin/nodes/${node.id}`, operator);
    const restart = page.getByRole("group", { name: "Power" }).getByRole("button", { name: "Restart…" });
    await restart.focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog");
    await expect.poll(() => dialog.isVisible(), WAIT).toBe(true);
    expect(await dialog.textContent()).toContain("ForceRestart");
    await page.keyboard.press("Escape");
    await expect.poll(() => dialog.isVisible(), WAIT).toBe(false);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Restart…");
  });

  it("a tenant's session never reaches the node page or its BMC", async () => {
    const tenant = await makeTenant();
    const member = await makeUser("tenant_admin", tenant.id);
    const node = await nodeOf(simBmc(0).hostname);
    const page = await openPage(browser, "/dashboard", member);
    const res = await page.goto(`${inject("baseUrl")}/admin/nodes/${node.id}`);
    expect(res?.status()).toBe(403);
    expect(await page.content()).not.toContain(simBmc(0).url);
  });
});
