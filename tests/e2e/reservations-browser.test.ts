import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { axeViolations } from "../support/axe";
import { confirmInDialog, expectNotFound, launchBrowser, openPage, shot } from "../support/browser";
import { actorFor, agentPrincipal, inventory, makeCluster, makeKey, makeTenant, makeUser, unique } from "../support/fixtures";
import { api } from "../support/http";

// A tenant books whole nodes in the browser, sees them on its calendar with their topology, runs
// a job inside the reservation and releases it early; another tenant gets 404; operators see it
// on the timeline and the fleet floor by tenant.

let browser: Browser;
let gpuType: string;
let tenantName: string;
let admin: Awaited<ReturnType<typeof makeUser>>;
let other: Awaited<ReturnType<typeof makeUser>>;
let operator: Awaited<ReturnType<typeof makeUser>>;
let tenantKey: string;

beforeAll(async () => {
  // four nodes in one pod, two racks, of a GPU type no other walk uses
  const cluster = await makeCluster();
  gpuType = unique("WB").replace(/-/g, "").slice(0, 10).toUpperCase();
  const agent = actorFor(agentPrincipal(cluster.id));
  for (let i = 0; i < 4; i++) {
    const r = await registerNode(agent, {
      hostname: unique(`walk-r${i % 2}`),
      pod: "pod-w",
      rack: `rack-w${i % 2}`,
      capabilities: { containers: true, runtime: "docker walk" },
      gpus: inventory(8, gpuType),
    });
    await recordHeartbeat(agent, r.node.id, {});
  }
  const tenant = await makeTenant(64);
  tenantName = tenant.name;
  admin = await makeUser("tenant_admin", tenant.id);
  tenantKey = (await makeKey({ scope: "tenant", tenant_id: tenant.id })).key;
  other = await makeUser("tenant_admin", (await makeTenant(8)).id);
  operator = await makeUser("operator");
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe("reservations in the browser", () => {
  it("a tenant books nodes, sees them on its calendar, runs a job inside, and releases early", async () => {
    const page = await openPage(browser, "/dashboard/reservations", admin, { width: 1440, height: 1000 });
    await page.getByRole("heading", { name: "Reservations", level: 1 }).waitFor();

    // what is free: the four nodes of this type, two whole racks
    const check = page.getByRole("form", { name: "Check capacity" });
    await check.getByLabel("GPU type").selectOption(gpuType);
    await check.getByRole("button", { name: "Check" }).click();
    await page.waitForURL(/gpu_type=/);
    const capacity = page.getByRole("table", { name: /Free capacity of/ });
    await capacity
      .getByRole("cell", { name: /whole rack/ })
      .first()
      .waitFor();
    expect(await capacity.getByText("4 / 4").count()).toBeGreaterThan(0);

    // book two nodes from now for two hours
    const book = page.getByRole("form", { name: "Book nodes" });
    await book.getByLabel("GPU type").selectOption(gpuType);
    await book.getByLabel("Whole nodes").fill("2");
    const now = new Date();
    await book.getByLabel("Starts (UTC)").fill(now.toISOString().slice(0, 16));
    await book.getByLabel("Ends (UTC)").fill(new Date(now.getTime() + 2 * 3_600_000).toISOString().slice(0, 16));
    // the price for the window shows as it is typed: 16 GPUs for 2 h at the "any other type" rate ($1.99)
    await book.getByTestId("booking-price").getByText("$63.68").waitFor();
    await book
      .getByTestId("booking-price")
      .getByText(/16 \w+ GPUs at \$1\.99 per GPU-hour/)
      .waitFor();
    // a booking commits money: it asks first, naming the price on its button; changing it books nothing
    await book.getByRole("button", { name: "Review booking…" }).click();
    const review = page.getByRole("dialog", { name: `Book 2 × ${gpuType} nodes?` });
    await review.getByTestId("booking-review-price").getByText("$63.68 (2 h)").waitFor();
    await shot(page, "reservation-review");
    await review.getByRole("button", { name: "Change booking" }).click();
    await review.waitFor({ state: "hidden" });
    expect(await api("GET", "/api/reservations", { key: tenantKey }).then((r) => r.body.data.length)).toBe(0);
    await book.getByRole("button", { name: "Review booking…" }).click();
    await review.getByRole("button", { name: "Book for $63.68" }).click();
    await book
      .getByTestId("form-message")
      .filter({ hasText: `Booked 2 × ${gpuType}` })
      .waitFor();
    // the form keeps what was booked, and links it
    expect(await book.getByLabel("Whole nodes").inputValue()).toBe("2");
    expect(await book.getByLabel("GPU type").inputValue()).toBe(gpuType);
    expect(await book.getByLabel("Starts (UTC)").inputValue()).toBe(now.toISOString().slice(0, 16));
    await book.getByRole("link", { name: "Open the reservation" }).waitFor();

    // on the calendar, and in the list; its page shows where the nodes are
    const calendar = page.getByRole("figure", { name: "Your reservations on a timeline" });
    await calendar.getByRole("link", { name: `2 × ${gpuType}` }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, "reservations-tenant");
    await calendar.getByRole("link", { name: `2 × ${gpuType}` }).click();
    await page.getByRole("heading", { name: `2 × ${gpuType} nodes` }).waitFor();
    const id = page.url().split("/").pop()!;
    await page.getByText("2 nodes on 1 rack in 1 pod").waitFor();
    await page
      .getByText("active", { exact: true })
      .or(page.getByText("confirmed", { exact: true }))
      .first()
      .waitFor();

    // a job that names the reservation, from the jobs page
    const jobs = await openPage(browser, "/dashboard/jobs", admin, { width: 1440, height: 1000 });
    const submit = jobs.getByRole("form", { name: "Submit job" });
    await submit.getByLabel("Name").fill("inside-the-reservation");
    await submit.getByLabel("GPU type").selectOption(gpuType);
    await submit.getByLabel("GPUs").fill("16");
    await submit.getByLabel("Reservation").selectOption(id);
    await submit.getByRole("button", { name: "Submit job" }).click();
    await submit.getByTestId("form-message").filter({ hasText: "submitted" }).waitFor();
    let jobId = "";
    for (let i = 0; i < 100; i++) {
      const listed = await api("GET", "/api/jobs?limit=50", { key: tenantKey });
      const job = (listed.body.data as Array<{ id: string; name: string; status: string; reservation_id: string | null }>).find(
        (j) => j.name === "inside-the-reservation",
      );
      if (job?.status === "running") {
        jobId = job.id;
        expect(job.reservation_id).toBe(id);
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(jobId).not.toBe("");
    await jobs.goto(`${new URL(jobs.url()).origin}/dashboard/jobs/${jobId}`);
    await jobs.getByRole("link", { name: `In reservation ${id.slice(0, 8)}` }).waitFor();
    await jobs.getByText("2 nodes on 1 rack in 1 pod").waitFor();
    await shot(jobs, "job-in-reservation-topology");
    await jobs.context().close();

    // the reservation's page lists it; releasing early stops it and frees the nodes
    await page.reload();
    await page.getByRole("link", { name: "inside-the-reservation" }).waitFor();
    await shot(page, "reservation-detail");
    const phone = await openPage(browser, `/dashboard/reservations/${id}`, admin, { width: 390, height: 844 });
    await phone.getByRole("heading", { name: `2 × ${gpuType} nodes` }).waitFor();
    await shot(phone, "reservation-detail-phone");
    await phone.goto(`${new URL(phone.url()).origin}/dashboard/reservations`);
    await phone.getByRole("heading", { name: "Reservations", level: 1 }).waitFor();
    await shot(phone, "reservations-tenant-phone");
    await phone.context().close();

    await page.getByRole("button", { name: "Release early" }).click();
    await confirmInDialog(page, { confirm: "Release nodes", keep: "Keep nodes" });
    // the page comes back with the reservation ended: no release button, its event in the log
    await page.getByText(/^Released early; it was booked until/).waitFor();
    expect(await page.getByRole("button", { name: "Release early" }).count()).toBe(0);
    const job = await api("GET", `/api/jobs/${jobId}`, { key: tenantKey });
    expect(job.body.job.status).toBe("cancelled");
    const r = await api("GET", `/api/reservations/${id}`, { key: tenantKey });
    expect(r.body.reservation).toMatchObject({ status: "released", node_count: 2 });
    const events = await api("GET", `/api/reservations/${id}/events`, { key: tenantKey });
    expect((events.body.data as Array<{ kind: string }>).map((e) => e.kind)).toEqual(expect.arrayContaining(["created", "released"]));
    await page.context().close();

    // another tenant learns nothing; operators see it on the timeline and the floor
    const stranger = await openPage(browser, `/dashboard/reservations/${id}`, other);
    await expectNotFound(stranger, "reservation");
    expect(await stranger.getByText(gpuType).count()).toBe(0);
    await stranger.context().close();
    const ops = await openPage(browser, "/admin/reservations", operator, { width: 1440, height: 1000 });
    await ops.getByRole("figure", { name: "Every reservation on a timeline" }).getByText(tenantName).first().waitFor();
    await ops.getByRole("heading", { name: "Fleet floor by tenant" }).waitFor();
    expect(await axeViolations(ops)).toEqual([]);
    await shot(ops, "reservations-operator");
    await ops.setViewportSize({ width: 390, height: 844 });
    await shot(ops, "reservations-operator-phone");
    await ops.context().close();
  });
});
