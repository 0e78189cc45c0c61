import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { E2E_BUNDLE_PUBLIC_KEY } from "../support/bundle-signing-key";
import { confirmInDialog, launchBrowser, shot } from "../support/browser";
import { makeTenant, makeUser } from "../support/fixtures";
import { api } from "../support/http";

let browser: Browser;
const base = () => inject("baseUrl");

let tenant: Awaited<ReturnType<typeof makeTenant>>;
let operator: Awaited<ReturnType<typeof makeUser>>;
let admin: Awaited<ReturnType<typeof makeUser>>;
let member: Awaited<ReturnType<typeof makeUser>>;

beforeAll(async () => {
  browser = await launchBrowser();
  tenant = await makeTenant(24);
  operator = await makeUser("operator");
  admin = await makeUser("tenant_admin", tenant.id);
  member = await makeUser("tenant_member", tenant.id);
});
afterAll(async () => browser?.close());

async function signIn(page: Page, email: string, password: string) {
  await page.fill("#f-email", email);
  await page.fill("#f-password", password);
  await page.click("form[aria-label='Sign in'] button[type=submit]");
}

async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  return context.newPage();
}

describe("sign-in and role routing", () => {
  it("sends an anonymous visitor of the tenant plane to sign-in and back", async () => {
    const page = await newPage();
    await page.goto(`${base()}/dashboard/users`);
    await page.waitForURL(/\/login\?callbackUrl=%2Fdashboard%2Fusers/);
    await shot(page, "login");
    await signIn(page, admin.email, admin.password);
    await page.waitForURL(`${base()}/dashboard/users`);
    await page.getByRole("heading", { name: "Users", exact: true }).waitFor();
    await shot(page, "tenant-users");
    await page.context().close();
  });

  it("lands operators on /admin and tenant users on /dashboard", async () => {
    const page = await newPage();
    await page.goto(`${base()}/login`);
    await signIn(page, operator.email, operator.password);
    await page.waitForURL(`${base()}/admin`);
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await shot(page, "admin-overview");
    await page.context().close();

    const p2 = await newPage();
    await p2.goto(`${base()}/login`);
    await signIn(p2, member.email, member.password);
    await p2.waitForURL(`${base()}/dashboard`);
    await p2.getByRole("heading", { name: tenant.name }).waitFor();
    // members see neither user nor key management in the menu; opening them says why, with a 403
    expect(await p2.getByRole("link", { name: "API keys" }).count()).toBe(0);
    for (const path of ["/dashboard/api-keys", "/dashboard/users"]) {
      const res = await p2.goto(`${base()}${path}`);
      expect(res?.status()).toBe(403);
      expect(p2.url()).toBe(`${base()}${path}`);
      await p2.getByRole("heading", { name: "This page is for your organisation's admins" }).waitFor();
    }
    await shot(p2, "member-forbidden");
    // the dashboard names the admins to ask
    await p2.goto(`${base()}/dashboard`);
    await p2.getByTestId("tenant-admins").getByText(admin.email).waitFor();
    await p2.context().close();
  });

  it("refuses a tenant user who opens the operator plane", async () => {
    const page = await newPage();
    await page.goto(`${base()}/login`);
    await signIn(page, admin.email, admin.password);
    await page.waitForURL(`${base()}/dashboard`);
    const res = await page.goto(`${base()}/admin/tenants`);
    expect(res?.status()).toBe(403);
    await page.getByRole("heading", { name: "This area is for platform operators" }).waitFor();
    await shot(page, "admin-forbidden");
    await page.context().close();
  });

  it("shows a clear error for a wrong password and signs in by keyboard alone", async () => {
    const page = await newPage();
    await page.goto(`${base()}/login`);
    await page.keyboard.type(admin.email); // the email field has focus on arrival
    await page.keyboard.press("Tab");
    await page.keyboard.type("not-the-password");
    await page.keyboard.press("Enter");
    await page.getByTestId("login-error").waitFor();
    expect(await page.getByTestId("login-error").textContent()).toContain("Wrong email or password");
    await page.focus("#f-password");
    await page.fill("#f-password", admin.password);
    await page.keyboard.press("Enter");
    await page.waitForURL(`${base()}/dashboard`);
    await page.context().close();
  });

  it("signs out from the user menu", async () => {
    const page = await newPage();
    await page.goto(`${base()}/login`);
    await signIn(page, operator.email, operator.password);
    await page.waitForURL(`${base()}/admin`);
    await page
      .getByRole("button", { name: /Operator|operator/ })
      .first()
      .click();
    await page.getByRole("menuitem", { name: "Sign out" }).click();
    await page.waitForURL(/\/login/);
    await page.goto(`${base()}/admin`);
    await page.waitForURL(/\/login\?callbackUrl=%2Fadmin/);
    await page.context().close();
  });
});

describe("API keys in the UI", () => {
  it("a tenant admin creates a key, sees it once, uses it, and revokes it", async () => {
    const page = await newPage();
    await page.goto(`${base()}/login?callbackUrl=/dashboard/api-keys`);
    await signIn(page, admin.email, admin.password);
    await page.waitForURL(`${base()}/dashboard/api-keys`);
    await page.fill("#f-name", "ui-created-key");
    await page.click("form[aria-label='Create API key'] button[type=submit]");
    const key = (await page.getByTestId("new-api-key").textContent())!.trim();
    expect(key).toMatch(/^gf_[0-9A-Za-z]{43}$/);
    await shot(page, "api-key-created");

    const ok = await api("GET", "/api/users", { key });
    expect(ok.status).toBe(200);

    // the full key is shown once: after a reload only the prefix is on the page
    await page.reload();
    expect(await page.content()).not.toContain(key);
    const row = page.getByTestId(`api-key-row-${key.slice(0, 12)}`);
    await row.waitFor();
    await row.getByRole("button", { name: "Revoke" }).click();
    await confirmInDialog(page, { confirm: "Revoke key", keep: "Keep key" });
    // a revoked key leaves the keys in use, and waits behind the filter
    await row.waitFor({ state: "detached" });
    await page.getByRole("link", { name: /Revoked and expired/ }).click();
    await page
      .getByTestId(`api-key-row-${key.slice(0, 12)}`)
      .getByText("revoked")
      .waitFor();
    await shot(page, "api-key-revoked");
    expect((await api("GET", "/api/users", { key })).status).toBe(401);
    await page.context().close();
  });

  it("a tenant admin makes a service account, a key it owns outlives nobody's rights but its own, and disabling it stops the key", async () => {
    const page = await newPage();
    await page.goto(`${base()}/login?callbackUrl=/dashboard/api-keys`);
    await signIn(page, admin.email, admin.password);
    await page.waitForURL(`${base()}/dashboard/api-keys`);
    const accountName = `ci-${Date.now()}`;
    const sa = page.locator("form[aria-label='Create service account']");
    await sa.locator("#sa-name").fill(accountName);
    await sa.locator("#sa-role").selectOption("tenant_admin");
    await sa.locator("#sa-description").fill("Deploys from CI");
    await sa.getByRole("button", { name: "Create service account" }).click();
    await page.getByText(`Service account “${accountName}” created`).waitFor();
    const accountRow = page.getByTestId(`service-account-row-${accountName}`);
    await accountRow.waitFor();
    // a key for it: the owner is chosen in the key form
    const form = page.locator("form[aria-label='Create API key']");
    await form.locator("#f-name").fill("deploys");
    await form.locator("#f-owner").selectOption({ label: `Service account ${accountName} (admin)` });
    await form.getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByTestId("new-api-key").textContent())!.trim();
    expect((await api("GET", "/api/users", { key })).status).toBe(200);
    await page.reload();
    const keyRow = page.getByTestId(`api-key-row-${key.slice(0, 12)}`);
    await keyRow.getByText(accountName).waitFor();
    await page.getByTestId(`service-account-row-${accountName}`).getByRole("cell", { name: "1", exact: true }).waitFor();
    await shot(page, "service-account-key");
    page.once("dialog", (d) => void d.accept());
    await page.getByTestId(`service-account-row-${accountName}`).getByRole("button", { name: "Disable" }).click();
    await page.getByTestId(`service-account-row-${accountName}`).getByText("disabled").waitFor();
    await keyRow.waitFor({ state: "detached" });
    expect((await api("GET", "/api/users", { key })).status).toBe(401);
    await shot(page, "service-account-disabled");
    await page.context().close();
  });

  it("an operator creates an agent key bound to a cluster, with the install command that checks the bundle's signature", async () => {
    const page = await newPage();
    await page.goto(`${base()}/login?callbackUrl=/admin/clusters`);
    await signIn(page, operator.email, operator.password);
    await page.waitForURL(`${base()}/admin/clusters`);
    const clusterName = `ui-cluster-${Date.now()}`;
    await page.fill("#f-name", clusterName);
    await page.click("form[aria-label='Register cluster'] button[type=submit]");
    await page.getByText(`Cluster “${clusterName}” registered`).waitFor();
    await page.goto(`${base()}/admin/api-keys`);
    await page.fill("#f-name", "rack-7 agents");
    await page.selectOption("#f-scope", "agent");
    await page.selectOption("#f-cluster_id", { label: clusterName });
    await page.click("form[aria-label='Create API key'] button[type=submit]");
    const key = (await page.getByTestId("new-api-key").textContent())!.trim();
    const clusters = await api("GET", "/api/clusters", { key });
    expect(clusters.body.data.map((c: { name: string }) => c.name)).toEqual([clusterName]);
    // the install command carries this control plane's public signing key, which the installer checks the bundle against
    expect((await page.getByTestId("agent-install-command").textContent())!.trim()).toBe(
      `curl -fsSL ${base()}/install.sh | sudo sh -s -- --signing-key ${E2E_BUNDLE_PUBLIC_KEY} --key ${key}`,
    );
    await shot(page, "agent-key-install-command");
    await page.context().close();
  });
});

describe("tenants in the UI", () => {
  it("an operator creates a tenant, sees field errors for bad input, and suspends it", async () => {
    const page = await newPage();
    await page.goto(`${base()}/login?callbackUrl=/admin/tenants`);
    await signIn(page, operator.email, operator.password);
    await page.waitForURL(`${base()}/admin/tenants`);
    // a duplicate name is refused with the error beside the field
    await page.fill("#f-name", tenant.name);
    await page.fill("#f-gpu_quota", "8");
    await page.click("form[aria-label='Create tenant'] button[type=submit]");
    await page.locator("#f-name-error").waitFor();
    expect(await page.locator("#f-name-error").textContent()).toContain("already exists");
    await shot(page, "tenant-duplicate-error");

    const name = `UI Tenant ${Date.now()}`;
    await page.fill("#f-name", name);
    await page.click("form[aria-label='Create tenant'] button[type=submit]");
    await page.getByRole("link", { name }).click();
    await page.getByRole("heading", { name }).waitFor();
    await page.getByRole("button", { name: "Suspend tenant" }).click();
    await confirmInDialog(page, { confirm: "Suspend tenant", keep: "Keep active" });
    await page.getByRole("button", { name: "Reactivate tenant" }).waitFor();
    await shot(page, "tenant-suspended");
    await page.context().close();
  });

  it("refuses cookie-authenticated API writes that are not JSON, accepts JSON ones", async () => {
    const page = await newPage();
    await page.goto(`${base()}/login`);
    await signIn(page, operator.email, operator.password);
    await page.waitForURL(`${base()}/admin`);
    const sameSite = { origin: base() };
    const form = await page.request.post(`${base()}/api/clusters`, { form: { name: "csrf-attempt" }, headers: sameSite });
    expect(form.status()).toBe(400);
    expect((await form.json()).error.details[0].path).toBe("content-type");
    const json = await page.request.post(`${base()}/api/clusters`, { data: { name: `session-${Date.now()}` }, headers: sameSite });
    expect(json.status()).toBe(201);
    await page.context().close();
  });

  it("refuses cookie-authenticated writes from other sites, body-less ones included", async () => {
    const page = await newPage();
    await page.goto(`${base()}/login`);
    await signIn(page, operator.email, operator.password);
    await page.waitForURL(`${base()}/admin`);
    for (const headers of [{ origin: "https://evil.example" }, { "sec-fetch-site": "cross-site" }, {}] as Array<Record<string, string>>) {
      const r = await page.request.post(`${base()}/api/scheduler/run`, { headers });
      expect(r.status(), JSON.stringify(headers)).toBe(403);
    }
    // the same request from the app's own pages is fine
    const ok = await page.evaluate(async () => (await fetch("/api/scheduler/run", { method: "POST" })).status);
    expect(ok).toBe(200);
    await page.context().close();
  });

  it("goes nowhere but this site after sign-in, whatever callbackUrl says", async () => {
    for (const evil of ["/%5Cevil.example", "/%09/evil.example", "//evil.example", "/%5C%5Cevil.example/x"]) {
      const page = await newPage();
      await page.goto(`${base()}/login?callbackUrl=${evil}`);
      await signIn(page, operator.email, operator.password);
      await page.waitForURL((u) => u.pathname.startsWith("/admin"));
      expect(new URL(page.url()).origin, evil).toBe(base());
      await page.context().close();
    }
  });

  it("signing out ends the session everywhere: a copied cookie stops working", async () => {
    const page = await newPage();
    await page.goto(`${base()}/login`);
    const user = await makeUser("operator");
    await signIn(page, user.email, user.password);
    await page.waitForURL(`${base()}/admin`);
    const cookies = await page.context().cookies();
    const cookie = cookies.map((c) => `${c.name}=${c.value}`).join("; ");
    expect((await api("GET", "/api/tenants", { headers: { cookie } })).status).toBe(200);
    await page.evaluate(async () => {
      const { csrfToken } = await (await fetch("/api/auth/csrf")).json();
      await fetch("/api/auth/signout", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ csrfToken, json: "true" }),
      });
    });
    expect((await api("GET", "/api/tenants", { headers: { cookie } })).status).toBe(401);
    await page.context().close();
  });
});
