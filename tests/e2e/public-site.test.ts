import { existsSync } from "node:fs";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { USE_CASES } from "@/content/use-cases";
import { db } from "@/lib/db/client";
import { axeViolations } from "../support/axe";
import { launchBrowser, openPage, policyViolations, shot } from "../support/browser";
import { makeCluster, makeTenant, makeUser, unique } from "../support/fixtures";
import { api } from "../support/http";

// The public site against the production build: every page is rendered with its own nonce, the demo
// request reaches the operators' inbox, analytics honour Do Not Track, and the public pages and
// both planes' main pages have no serious or critical accessibility violations (axe-core).

let browser: Browser;
let operator: Awaited<ReturnType<typeof makeUser>>;
let tenantUser: Awaited<ReturnType<typeof makeUser>>;

beforeAll(async () => {
  browser = await launchBrowser();
  operator = await makeUser("operator");
  const tenant = await makeTenant(4);
  tenantUser = await makeUser("tenant_admin", tenant.id);
  // the scanned pages draw their charts (whatever ran before): fleet utilization and billed usage
  const cluster = await makeCluster();
  await db().$executeRaw`
    INSERT INTO cluster_metrics_1m (cluster_id, bucket, gpus_reporting, samples, utilization_sum, temperature_max, power_sum)
    SELECT ${cluster.id}::uuid, date_trunc('minute', now()) - make_interval(mins => m), 8, 8, 400, 60, 2400 FROM generate_series(1, 3) m
    ON CONFLICT DO NOTHING`;
  const job = await db().job.create({
    data: {
      tenantId: tenant.id,
      name: "charted",
      gpuCount: 2,
      gpuType: "H100",
      priority: 5,
      maxRetries: 0,
      status: "cancelled",
      finishedAt: new Date(),
    },
  });
  await db().$executeRaw`
    INSERT INTO usage_events (tenant_id, job_id, attempt, kind, settlement, gpu_type, gpu_count, started_at, ended_at, gpu_seconds, cents_per_hour, amount_cents)
    VALUES (${tenant.id}::uuid, ${job.id}::uuid, 1, 'final', 'invoice', 'H100', 2, now() - interval '2 hours', now() - interval '1 hour', 7200, 249, 498)`;
});
afterAll(async () => browser?.close());

const visit = (target: string, user?: { email: string; password: string }) => openPage(browser, target, user, { width: 1280, height: 900 });

describe("public pages", () => {
  it("renders every use-case and blog page per request, each with its own nonce, and only the pages the content defines", async () => {
    // rendered per request, not prerendered: a page's scripts carry its response's
    // Content-Security-Policy nonce (proxy.ts), which HTML made at build time could not
    const pages: [string, string][] = USE_CASES.map((u) => [`/use-cases/${u.slug}`, u.headline]);
    for (const slug of ["event-driven-scheduling", "per-second-billing-in-integer-cents", "capping-automatic-quarantine"])
      pages.push([`/blog/${slug}`, ""]);
    for (const [page, headline] of pages) {
      const res = await fetch(inject("baseUrl") + page);
      expect(res.status, page).toBe(200);
      const nonce = /'nonce-([^']+)'/.exec(res.headers.get("content-security-policy") ?? "")?.[1];
      expect(nonce, page).toBeTruthy();
      const html = await res.text();
      expect(html).toContain(`nonce="${nonce}"`);
      if (headline) expect(html).toContain(headline.replace(/'/g, "&#x27;"));
    }
    expect(existsSync(path.resolve(".next/server/app/index.html"))).toBe(false);
    expect((await fetch(`${inject("baseUrl")}/blog/no-such-post`)).status).toBe(404);
  });

  it("serves a sitemap of the public pages, robots rules and an Open Graph image", async () => {
    const sitemap = await fetch(`${inject("baseUrl")}/sitemap.xml`).then((r) => r.text());
    for (const u of USE_CASES) expect(sitemap).toContain(`/use-cases/${u.slug}</loc>`);
    expect(sitemap).toContain("/blog/event-driven-scheduling</loc>");
    const robots = await fetch(`${inject("baseUrl")}/robots.txt`).then((r) => r.text());
    expect(robots).toMatch(/Disallow: \/admin/);
    expect(robots).toMatch(/Sitemap: .*\/sitemap\.xml/);
    const html = await fetch(`${inject("baseUrl")}/use-cases/gpu-billing-and-chargeback`).then((r) => r.text());
    expect(html).toContain('rel="canonical"');
    expect(html).toContain("application/ld+json");
    const og = /property="og:image" content="([^"]+)"/.exec(await fetch(`${inject("baseUrl")}/`).then((r) => r.text()))?.[1];
    expect(og).toBeTruthy();
    const image = await fetch(new URL(new URL(og!).pathname, inject("baseUrl")));
    expect(image.headers.get("content-type")).toBe("image/png");
    expect((await fetch(`${inject("baseUrl")}/use-cases/no-such-page`)).status).toBe(404);
  });
});

describe("landing and demo requests", () => {
  it("a visitor asks for a demo (field errors first); operators find it in their inbox", async () => {
    const page = await visit("/");
    await page.getByRole("heading", { level: 1, name: /Turn racks of GPU servers/ }).waitFor();
    await page.getByRole("button", { name: "Request a demo" }).first().click();
    const form = page.locator("form[aria-label='Request a demo']");
    await form.getByRole("button", { name: "Send request" }).click();
    await form.getByText("Your name is required").waitFor();
    await form.getByText("Must be an email address").waitFor();
    const email = `${unique("visitor")}@example.test`;
    await form.locator("#f-name").fill("Katherine Johnson");
    await form.locator("#f-email").fill(email);
    await form.locator("#f-company").fill("Orbital GPU Co");
    await form.locator("#f-message").fill("600 H100s, 40 research teams");
    await form.getByRole("button", { name: "Send request" }).click();
    await form.getByText(`We will write to ${email}`).waitFor();
    await shot(page, "public-landing-demo");
    await page.context().close();
    const stored = await db().demoRequest.findFirstOrThrow({ where: { email } });
    expect(stored).toMatchObject({ name: "Katherine Johnson", company: "Orbital GPU Co", status: "new" });
    expect(await db().notification.count({ where: { demoRequestId: stored.id } })).toBeGreaterThan(0);

    const inbox = await visit("/admin/demo-requests", operator);
    const row = inbox.locator("tr", { hasText: email });
    await row.getByRole("button", { name: "Mark contacted" }).click();
    await row.getByText("contacted").waitFor();
    await shot(inbox, "admin-demo-requests");
    await inbox.goto(`${inject("baseUrl")}/admin/analytics`);
    await inbox.getByRole("heading", { name: "Site analytics" }).waitFor();
    await shot(inbox, "admin-analytics");
    await inbox.context().close();
  });

  it("records first-party page views without cookies, and none for Do Not Track", async () => {
    const path0 = `/blog/event-driven-scheduling`;
    const before = await db().pageView.count({ where: { path: path0 } });
    const page = await visit(path0);
    await page.getByRole("heading", { level: 1 }).waitFor();
    await expect.poll(() => db().pageView.count({ where: { path: path0 } }), { timeout: 10_000 }).toBeGreaterThan(before);
    expect((await page.context().cookies()).length).toBe(0);
    await page.context().close();
    const quiet = `/docs/agent-${unique("dnt")}`;
    for (const headers of [{ dnt: "1" }, { "sec-gpc": "1" }] as Array<Record<string, string>>) {
      const r = await api("POST", "/api/analytics/pageview", { body: { path: quiet }, headers });
      expect(r).toMatchObject({ status: 202, body: { recorded: false } });
    }
    expect(await db().pageView.count({ where: { path: quiet } })).toBe(0);
    const recorded = await api("POST", "/api/analytics/pageview", {
      body: { path: "/docs?utm=x#top", referrer: "https://www.google.com/search?q=gpu" },
      headers: { "x-forwarded-for": "203.0.113.9" },
    });
    expect(recorded.body.recorded).toBe(true);
    const last = await db().pageView.findFirstOrThrow({ orderBy: { id: "desc" } });
    expect(last).toMatchObject({ path: "/docs", referrerHost: "www.google.com" });
    expect(last.sessionHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refuses a page view whose path is not a path, naming it, and records nothing", async () => {
    const before = await db().pageView.count({ where: { path: "nope" } });
    const r = await api("POST", "/api/analytics/pageview", { body: { path: "nope" }, headers: { "x-forwarded-for": "198.51.100.251" } });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toEqual([expect.objectContaining({ path: "path" })]);
    expect(await db().pageView.count({ where: { path: "nope" } })).toBe(before);
  });

  it("rate-limits the three public endpoints per address, writing nothing once limited", async () => {
    const cases = [
      {
        path: "/api/demo-requests",
        limit: 20,
        body: () => ({ name: "Spam", email: `${unique("s")}@example.test` }),
        count: () => db().demoRequest.count(),
      },
      {
        path: "/api/early-access",
        limit: 20,
        body: () => ({ email: `${unique("s")}@example.test` }),
        count: () => db().earlyAccess.count(),
      },
      { path: "/api/analytics/pageview", limit: 300, body: () => ({ path: "/" }), count: () => db().pageView.count() },
    ];
    for (const c of cases) {
      const ip = `198.51.100.${Math.floor(Math.random() * 250)}`;
      for (let i = 0; i < c.limit; i++)
        expect((await api("POST", c.path, { body: c.body(), headers: { "x-forwarded-for": ip } })).status).toBeLessThan(300);
      const before = await c.count();
      const limited = await api("POST", c.path, { body: c.body(), headers: { "x-forwarded-for": ip } });
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(await c.count()).toBe(before);
      expect((await api("POST", c.path, { body: c.body(), headers: { "x-forwarded-for": "192.0.2.77" } })).status).toBeLessThan(300);
    }
  });
});

describe("accessibility (axe-core)", () => {
  const pages: Array<[string, "visitor" | "operator" | "tenant"]> = [
    ["/", "visitor"],
    ["/use-cases/gpu-cluster-management", "visitor"],
    ["/blog/capping-automatic-quarantine", "visitor"],
    ["/docs", "visitor"],
    ["/login", "visitor"],
    ["/admin", "operator"],
    ["/admin/alerts", "operator"],
    ["/admin/billing", "operator"],
    ["/admin/endpoints", "operator"],
    ["/admin/jobs", "operator"],
    ["/admin/audit", "operator"],
    ["/admin/settings", "operator"],
    ["/admin/alerts/silences", "operator"],
    ["/admin/alerts/notifications", "operator"],
    ["/admin/api-keys", "operator"],
    ["/dashboard", "tenant"],
    ["/dashboard/jobs", "tenant"],
    ["/dashboard/alerts", "tenant"],
    ["/dashboard/api-keys", "tenant"],
    ["/dashboard/billing", "tenant"],
    ["/dashboard/endpoints", "tenant"],
  ];
  it("finds no serious or critical violations on the public pages and both planes' main pages", async () => {
    const found: string[] = [];
    for (const [target, who] of pages) {
      const page = await visit(target, who === "operator" ? operator : who === "tenant" ? tenantUser : undefined);
      const violations = await axeViolations(page);
      for (const v of violations) found.push(`${target}: ${v}`);
      if (who === "visitor") await shot(page, `public${target.replace(/\//g, "-") || "-home"}`);
      await page.context().close();
    }
    expect(found).toEqual([]);
  }, 360_000); // every main page of three planes in turn, with axe on each: minutes on a loaded machine
});

describe("the Content-Security-Policy in a browser", () => {
  it("runs the page's own scripts and refuses one written into its markup", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    // what an injection would look like: a script in the HTML without this response's nonce
    await page.route(`${inject("baseUrl")}/login`, async (route) => {
      const res = await route.fetch();
      const html = (await res.text()).replace("</head>", "<script>window.__injected = true</script></head>");
      await route.fulfill({ response: res, body: html });
    });
    await page.goto(`${inject("baseUrl")}/login`);
    // the page hydrated (React answers the form) and the injected script never ran
    await page.fill("#f-email", "nobody@example.test");
    await page.fill("#f-password", "wrong password");
    await page.click("form[aria-label='Sign in'] button[type=submit]");
    await page.getByTestId("login-error").waitFor();
    expect(await page.evaluate(() => (window as unknown as { __injected?: boolean }).__injected)).toBeUndefined();
    await expect.poll(() => policyViolations(page).length).toBeGreaterThan(0);
    expect(policyViolations(page).join("\n")).toMatch(/inline script/i);
    await context.close();
  });
});
