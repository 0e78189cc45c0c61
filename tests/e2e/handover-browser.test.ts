import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPolicy } from "@/lib/attestation/create-policy";
import { verifyJws, type Jwks } from "@/lib/attestation/verdict-jws";
import { systemActor } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { createReservation } from "@/lib/reservations/create-reservation";
import { axeViolations } from "../support/axe";
import { launchBrowser, openPage, shot } from "../support/browser";
import { asTenantAdmin, makeKey, makeTenant, makeUser, unique } from "../support/fixtures";
import { goldenPolicyBody } from "../support/handover-agent";
import { api } from "../support/http";
import { ensureSystemTool } from "../support/system-packages";
import { startWalkFleet, type WalkFleet } from "../support/walk-fleet";

// A handover in the browser, against the served app and a simulated fleet whose nodes attest with
// a real software TPM each (swtpm, driven by tpm2-tools): the operator names the cluster's policy,
// hands over a node that boots an implant, watches it go releasing → wiping → inspecting and fail
// into quarantine with the verdict's failures, then re-inspects it once the implant is gone and
// sees it pass and return to service. A tenant that received a node sees its signed verdict, and
// the JWS downloaded from the page verifies against the public key set alone.

ensureSystemTool("swtpm", "tpm2Tools");

let browser: Browser;
let fleet: WalkFleet;
let operator: Awaited<ReturnType<typeof makeUser>>;
let policyName: string;
let gpuType: string;

beforeAll(async () => {
  gpuType = "A100"; // a GPU type no other walk uses
  fleet = await startWalkFleet({ gpuType, nodes: 2, sim: { wipeS: 1, tpm: "swtpm" } });
  expect(fleet.sim.tpmKind).toBe("swtpm");
  policyName = unique("walk-golden");
  await createPolicy(systemActor, {
    name: policyName,
    description: "the simulated firmware's clean boot",
    ...goldenPolicyBody(["event_log", "wipe_report"]),
  });
  operator = await makeUser("operator");
  browser = await launchBrowser();
  // every node of the fleet in service before the walk begins
  for (let i = 0; i < 100; i++) {
    if ((await db().node.count({ where: { clusterId: fleet.cluster.id, status: "available" } })) === 2) break;
    await new Promise((r) => setTimeout(r, 200));
  }
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await fleet?.stop();
});

const nodesOf = () =>
  db().node.findMany({ where: { clusterId: fleet.cluster.id }, orderBy: { hostname: "asc" }, select: { id: true, hostname: true } });

/** Waits until the node page (reloaded as it refreshes itself) shows the node in `status`. */
async function untilStatus(page: Page, nodeId: string, status: string) {
  for (let i = 0; i < 240; i++) {
    if ((await db().node.findUniqueOrThrow({ where: { id: nodeId }, select: { status: true } })).status === status) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  await page.reload();
  await page.getByRole("heading", { level: 1 }).waitFor();
}

async function startFromPage(page: Page, button: "Hand over…" | "Re-inspect…", reason: string) {
  await page.getByRole("group", { name: "Handover" }).getByRole("button", { name: button }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel(/Reason/).fill(reason);
  await dialog.getByRole("button", { name: button === "Hand over…" ? "Start the handover" : "Inspect again" }).click();
  await page
    .getByTestId("form-message")
    .filter({ hasText: button === "Hand over…" ? "Handover started" : "Re-inspection started" })
    // a loaded machine answers a server action slowly; the page shows the answer when it comes
    .waitFor({ timeout: 90_000 })
    .catch(async (e: unknown) => {
      await shot(page, `handover-debug-${button.slice(0, 4)}`);
      throw e;
    });
}

describe("a handover in the browser", () => {
  it("the operator names the cluster's policy, a node with an implant fails its attestation into quarantine, and passes a re-inspection once it is clean", async () => {
    const page = await openPage(browser, `/admin/clusters/${fleet.cluster.id}`, operator, { width: 1440, height: 1100 });
    // the cluster's handover settings, in the browser
    const settings = page.getByRole("form", { name: "Handover settings" });
    await settings.getByLabel("Wipe command").fill("/usr/local/sbin/wipe-local-disks --secure-erase");
    await settings.getByLabel("Policy").selectOption({ label: `${policyName} (v1)` });
    await settings.getByRole("button", { name: "Save handover settings" }).click();
    await settings
      .getByTestId("form-message")
      .filter({ hasText: `attested against ${policyName}` })
      .waitFor();

    const [bad, good] = await nodesOf();
    fleet.sim.injectFault(bad!.hostname, "implant");
    await page.goto(page.url().replace(/\/admin\/clusters\/.*/, `/admin/nodes/${bad!.id}`));
    await page.getByRole("heading", { name: bad!.hostname, level: 1 }).waitFor();
    expect(await page.getByTestId("latest-verdict").count()).toBe(0);
    await startFromPage(page, "Hand over…", "new tenant next week");
    await untilStatus(page, bad!.id, "quarantined");
    // it went through every step of the handover before the verdict put it in quarantine
    const path = await db().nodeEvent.findMany({ where: { nodeId: bad!.id }, orderBy: { id: "asc" }, select: { toStatus: true } });
    expect(path.map((e) => e.toStatus).slice(-5)).toEqual(["releasing", "wiping", "inspecting", "attestation_failed", "quarantined"]);
    const verdict = page.getByTestId("latest-verdict");
    await expect(verdict.getAttribute("data-result")).resolves.toBe("fail");
    const failures = page.getByRole("list", { name: "Failures" });
    await failures.getByText("policy.pcr.mismatch").waitFor();
    await failures.getByText("event_log.event.unknown").first().waitFor();
    await verdict.getByText(policyName, { exact: true }).waitFor();
    const timeline = page.getByTestId("handover-workflow").first();
    expect(await timeline.getAttribute("data-status")).toBe("failed");
    expect(
      await timeline
        .locator("[data-step]")
        .evaluateAll((els) => els.map((e) => `${e.getAttribute("data-step")}:${e.getAttribute("data-step-status")}`)),
    ).toEqual(["release:succeeded", "wipe:succeeded", "attest:failed"]);
    // the alert says why, and the node cannot just be returned to service
    await page.getByRole("heading", { name: /Firing alerts/ }).waitFor();
    expect(await page.getByRole("group", { name: "Node lifecycle" }).getByRole("button", { name: "Return to service…" }).count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, "handover-failed-attestation");

    // the operator reimages it (the implant is gone) and inspects it again: it passes and returns
    fleet.sim.injectFault(bad!.hostname, "clear");
    await startFromPage(page, "Re-inspect…", "reimaged after the failed attestation");
    await untilStatus(page, bad!.id, "available");
    await expect(page.getByTestId("latest-verdict").getAttribute("data-result")).resolves.toBe("pass");
    expect(await page.getByTestId("handover-workflow").count()).toBe(2);
    expect(await page.getByTestId("handover-workflow").first().getAttribute("data-status")).toBe("succeeded");
    await page.getByText("swtpm").first().waitFor();
    await shot(page, "handover-reinspection-passed");

    // the downloaded JWS verifies against the published key set alone
    const href = await page.getByRole("link", { name: "Download the signed verdict (JWS)" }).getAttribute("href");
    const jws = decodeURIComponent(href!.replace(/^data:application\/jose;charset=utf-8,/, ""));
    const jwks = (await api("GET", "/api/attestation/keys")).body as Jwks;
    expect(verifyJws(jws, jwks)).toMatchObject({
      ok: true,
      payload: { node_id: bad!.id, result: "pass", policy: policyName, tpm_kind: "swtpm" },
    });

    // the floor shows a node in its handover in its own colour, counted
    fleet.sim.injectFault(good!.hostname, "clear");
    await api("POST", `/api/nodes/${good!.id}/handover`, { key: await operatorKey(), body: { mode: "full", reason: "floor walk" } });
    for (let i = 0; i < 40; i++) {
      const s = (await db().node.findUniqueOrThrow({ where: { id: good!.id }, select: { status: true } })).status;
      if (["releasing", "wiping", "inspecting"].includes(s)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await page.goto(page.url().replace(/\/admin\/nodes\/.*/, `/admin/clusters/${fleet.cluster.id}`));
    await page.getByRole("list", { name: "Legend" }).getByText("wiping node").waitFor();
    await page.getByText("in handover").first().waitFor();
    await shot(page, "handover-floor");
    await untilStatus(page, good!.id, "available");
  }, 300_000);

  it("a tenant that received a handed-over node sees its signed verdict on its reservation", async () => {
    const tenant = await makeTenant(64);
    const admin = await makeUser("tenant_admin", tenant.id);
    const now = Date.now();
    const r = await createReservation(asTenantAdmin(tenant.id), {
      gpu_type: gpuType,
      cluster_id: fleet.cluster.id,
      node_count: 1,
      starts_at: new Date(now).toISOString(),
      ends_at: new Date(now + 3_600_000).toISOString(),
    });
    const page = await openPage(browser, `/dashboard/reservations/${r.id}`, admin, { width: 1440, height: 1000 });
    const row = page.getByTestId("node-verdict").first();
    await row.waitFor();
    expect(await row.getAttribute("data-result")).toBe("pass");
    await row.getByRole("link", { name: /Download JWS/ }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, "handover-tenant-verdicts");
  });

  it("the policies page lists the policy, its clusters and the signing keys, by keyboard", async () => {
    const page = await openPage(browser, "/admin/attestation", operator, { width: 1440, height: 1000 });
    await page.getByRole("heading", { name: "Attestation policies", level: 1 }).waitFor();
    const row = page.getByRole("row", { name: new RegExp(policyName) });
    await row.waitFor();
    await row.getByText(fleet.cluster.name).waitFor();
    await page.getByText("signing now").waitFor();
    // a policy without its required sections is refused, naming the section
    const write = page.getByRole("form", { name: "Write a policy" });
    await write.getByLabel("Name").fill(unique("broken"));
    await write.getByLabel("Sections").fill(JSON.stringify({ pcr_bank: "sha256", pcrs: { "0": "00".repeat(32) } }));
    await write.getByRole("button", { name: "Create policy" }).press("Enter");
    await write
      .getByText(/require|Required|expected array/)
      .first()
      .waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await row.getByRole("link", { name: policyName }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: policyName, level: 1 }).waitFor();
    await page.getByRole("table", { name: "Known boot events" }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, "attestation-policy");
  });
});

let opKey: string | undefined;
async function operatorKey(): Promise<string> {
  opKey ??= (await makeKey({ scope: "operator" })).key;
  return opKey;
}
