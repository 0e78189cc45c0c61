import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { systemActor } from "@/lib/auth/principal";
import { totpCode } from "@/lib/auth/totp";
import { db } from "@/lib/db/client";
import { updateSettings } from "@/lib/settings/update-settings";
import { freePort } from "../../scripts/lib/embedded-db";
import { startNext, waitForHealthy, type ServerGroup } from "../../scripts/lib/next-server";
import { e2eServerEnv } from "../support/app-env";
import { axeViolations } from "../support/axe";
import { launchBrowser } from "../support/browser";
import { availableFleet, unique } from "../support/fixtures";
import { linkIn, startSmtpServer, type Inbox } from "../support/smtp";
import { E2E_STRIPE_WEBHOOK_SECRET, startStripeStandIn, type StripeStandIn } from "../support/stripe";
import path from "node:path";

// A stranger becomes a paying tenant in a real browser: the landing page, sign-up, the verification
// mail read from a real SMTP server, sign-in, two-factor enrolment (the code computed from the
// secret the page shows, as an authenticator app would), a card deposit through Stripe Checkout
// (the local stand-in's hosted page, then its signed webhook), and a first job on the fleet. The
// app here is a second server on the walks' database with Stripe configured; mail goes through
// the console's SMTP setting, so every app process on the database delivers to the same server.

let app: ServerGroup;
let base: string;
let inbox: Inbox;
let stripe: StripeStandIn;
let browser: Browser;
let gpuType: string;

beforeAll(async () => {
  inbox = await startSmtpServer();
  await updateSettings(systemActor, { "notifications.smtp_url": inbox.url });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  stripe = await startStripeStandIn({ webhookSecret: E2E_STRIPE_WEBHOOK_SECRET, deliver: `${base}/api/webhooks/stripe` });
  app = startNext({
    port,
    env: {
      ...e2eServerEnv(inject("databaseUrl")),
      NEXTAUTH_URL: base,
      STRIPE_SECRET_KEY: "sk_test_walk",
      STRIPE_API_BASE: stripe.url,
      MAIL_FROM: "Forge Cloud <accounts@forge.test>",
    },
    quiet: true,
  });
  await waitForHealthy(base);
  const fleet = await availableFleet(1, 4, "SS");
  gpuType = fleet.gpuType;
  await db().gpuRate.create({ data: { gpuType, centsPerHour: 120, effectiveFrom: new Date("2020-01-01"), createdBy: "walk" } });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await stripe?.close();
  await inbox?.close();
  await updateSettings(systemActor, { "notifications.smtp_url": null });
});

const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(inject("artifactsDir"), "screenshots", `self-service-${name}.png`), fullPage: true });

async function signIn(page: Page, email: string, password: string) {
  await page.goto(`${base}/login`);
  await page.fill("#f-email", email);
  await page.fill("#f-password", password);
  await page.click("form[aria-label='Sign in'] button[type=submit]");
}

describe("self-service, in a browser", () => {
  it("landing page → sign-up → verification mail → sign-in → two-factor → card deposit → first job", async () => {
    const email = `${unique("stranger")}@example.test`;
    const password = "a long walk to the harbour 42";
    const company = unique("Stranger Labs");
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const consoleErrors: string[] = [];
    // errors of our pages (the stand-in's page is Stripe's; a refused sign-in step answers 401 by design)
    page.on("console", (m) => {
      if (m.type() === "error" && m.location().url.startsWith(base) && !/status of 401/.test(m.text())) consoleErrors.push(m.text());
    });

    await page.goto(`${base}/`);
    await page.getByRole("link", { name: "Rent GPUs: create an account" }).click();
    await page.waitForURL(`${base}/signup`);
    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel("Company or team").fill(company);
    await page.getByLabel("Work email").fill(email);
    await page.getByLabel("Password").fill(password);
    await shot(page, "1-signup");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByTestId("signup-sent").waitFor();
    expect(await page.getByTestId("signup-sent").textContent()).toContain(email);

    // not yet: the account cannot sign in before its address is confirmed
    const early = await (await browser.newContext()).newPage();
    await signIn(early, email, password);
    await early.getByTestId("login-error").waitFor();
    expect(await early.getByTestId("login-error").textContent()).toContain("Confirm your email address first");

    const mail = await inbox.waitFor(email, (m) => /Confirm your email address/.test(m.subject ?? ""));
    expect(mail.html).toContain("Confirm my email address");
    await page.goto(linkIn(mail, "/signup/verify?token="));
    expect(await axeViolations(page)).toEqual([]);
    // the link proves the mailbox; the password proves who made the account: a wrong one verifies nothing
    await page.getByLabel("Password", { exact: true }).fill("not the password of this account");
    await page.getByRole("button", { name: "Confirm my email address" }).click();
    await page.getByText("This is not the password the account was created with").waitFor();
    await shot(page, "2-verify-wrong-password");
    await page.getByLabel("Password", { exact: true }).fill(password);
    await page.keyboard.press("Enter");
    await page.getByTestId("token-done").waitFor();
    await shot(page, "2-verified");
    await page.getByRole("link", { name: "Sign in" }).click();
    await page.waitForURL(/\/login/);
    await page.fill("#f-email", email);
    await page.fill("#f-password", password);
    await page.click("form[aria-label='Sign in'] button[type=submit]");
    await page.waitForURL(`${base}/dashboard`);

    // two-factor enrolment from the account page, by keyboard where a person would use it
    await page.goto(`${base}/dashboard/account`);
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole("button", { name: "Set up two-factor sign-in" }).click();
    const secret = (await page.getByTestId("totp-secret").textContent())!.trim();
    await shot(page, "3-two-factor-qr");
    await page.getByLabel("Your password").fill(password);
    await page.getByLabel("Code from the app").fill(totpCode(secret, Date.now()));
    await page.keyboard.press("Enter");
    await page.getByTestId("recovery-codes").waitFor();
    expect((await page.getByTestId("recovery-codes").locator("li").allTextContents()).length).toBe(10);
    await shot(page, "4-recovery-codes");
    await page.getByRole("button", { name: "I saved them — done" }).click();
    await page.getByText(/on since/).waitFor();

    // signing in again now takes a code (the next one: a code is accepted once)
    await page.context().clearCookies();
    await signIn(page, email, password);
    await page.getByLabel("Code").waitFor();
    expect(await page.getByLabel("Code").inputValue()).toBe(""); // never the password, carried over
    expect(await page.locator("input[type=password]").count()).toBe(0);
    await shot(page, "5-second-factor");
    await page.getByLabel("Code").fill(totpCode(secret, Date.now() + 30_000));
    await page.getByRole("button", { name: "Verify" }).click();
    await page.waitForURL(`${base}/dashboard`);

    // a card deposit: Stripe Checkout (the stand-in's hosted page), then the signed webhook
    await page.goto(`${base}/dashboard/billing`);
    await page.getByRole("button", { name: "$25.00" }).click();
    await shot(page, "6-add-funds");
    await page.getByRole("button", { name: "Pay by card" }).click();
    await page.waitForURL(new RegExp(`^${stripe.url}/c/pay/`));
    await page.getByRole("button", { name: "Pay" }).click();
    await page.waitForURL(new RegExp(`^${base}/dashboard/billing\\?deposit=`));
    await page.getByTestId("deposit-return").waitFor();
    expect(await page.getByTestId("deposit-return").textContent()).toContain("$25.00 was added to your balance");
    expect(await page.locator("text=Paid").count()).toBeGreaterThan(0);
    await shot(page, "7-deposit-received");
    expect(stripe.events.map((e) => [e.type, e.status])).toContainEqual(["checkout.session.completed", 200]);
    const tenant = await db().tenant.findFirstOrThrow({ where: { users: { some: { email } } } });
    const ledger = await db().ledgerEntry.findMany({ where: { tenantId: tenant.id } });
    expect(ledger.map((e) => [e.kind, Number(e.amountCents)])).toEqual([["deposit", 2500]]);
    const receipt = await inbox.waitFor(email, (m) => /Receipt/.test(m.subject ?? ""));
    expect(receipt.text).toContain("Your balance is now $25.00");

    // a first job, placed on the fleet
    await page.goto(`${base}/dashboard/jobs`);
    const submit = page.getByRole("form", { name: "Submit job" });
    await submit.getByLabel("Name").fill("first-job");
    await submit.getByLabel("GPU type").selectOption(gpuType);
    await submit.getByLabel("GPUs", { exact: true }).fill("1");
    await submit.locator("button[type=submit]").click();
    await submit.getByTestId("form-message").waitFor();
    let job = await db().job.findFirstOrThrow({ where: { tenantId: tenant.id, name: "first-job" } });
    for (let i = 0; i < 60 && job.status !== "running"; i++) {
      await new Promise((r) => setTimeout(r, 500));
      job = await db().job.findFirstOrThrow({ where: { id: job.id } });
    }
    expect(job.status).toBe("running");
    await page.goto(`${base}/dashboard/jobs/${job.id}`);
    await shot(page, "8-first-job");
    expect(consoleErrors).toEqual([]);

    // what the operator sees: a verified self-service sign-up with its starting limits
    expect(tenant).toMatchObject({ origin: "signup", signupExpiresAt: null, billingMode: "prepaid", maxPods: 2 });
  });

  it("the owner of an address someone else signed up with cannot confirm it, and removes it from the link's page", async () => {
    const email = `${unique("victim")}@example.test`;
    const attackers = "the attackers own passphrase 31";
    const signup = await fetch(`${base}/api/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: attackers, company: unique("Attacker Labs") }),
    });
    expect(signup.status).toBe(202);
    const mail = await inbox.waitFor(email, (m) => /Confirm your email address/.test(m.subject ?? ""));
    const page = await (await browser.newContext()).newPage();
    await page.goto(linkIn(mail, "/signup/verify?token="));
    // the owner does not know the attacker's password: a password of their own verifies nothing
    await page.getByLabel("Password", { exact: true }).fill("the victims own passphrase 64");
    await page.getByRole("button", { name: "Confirm my email address" }).click();
    await page.getByText("This is not the password the account was created with").waitFor();
    expect(await db().user.findUniqueOrThrow({ where: { email } })).toMatchObject({ emailVerifiedAt: null });
    await page.getByRole("button", { name: "Remove this unconfirmed account" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("link", { name: "Sign up with your address →" }).waitFor();
    // removed: the page no longer offers to confirm it
    expect(await page.getByRole("button", { name: "Confirm my email address" }).count()).toBe(0);
    await shot(page, "2-verify-discarded");
    expect(await db().user.findUnique({ where: { email } })).toBeNull();
  });

  it("an operator sees sign-ups and their verification state, and sets the self-service defaults", async () => {
    const { makeUser } = await import("../support/fixtures");
    const operator = await makeUser("operator");
    const page = await (await browser.newContext({ viewport: { width: 1400, height: 1000 } })).newPage();
    await signIn(page, operator.email, operator.password);
    await page.waitForURL(`${base}/admin`);
    await page.goto(`${base}/admin/tenants`);
    expect(await page.locator("text=sign-up · verified").count()).toBeGreaterThan(0);
    await shot(page, "9-tenants");
    await page.goto(`${base}/admin/settings#self-service`);
    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel("Pods at once").first().fill("3");
    await page.getByRole("button", { name: "Save self-service settings" }).click();
    await page.getByText(/new sign-ups start with these defaults/).waitFor();
    await shot(page, "10-settings");
    const { effectiveSettings } = await import("@/lib/settings/settings");
    expect((await effectiveSettings()).signup.defaults.max_pods).toBe(3);
    await updateSettings(systemActor, { "signup.defaults": null });
  });

  it("public forms count invalid submissions against the visitor's limit too", async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${base}/password-reset`);
    const answers: string[] = [];
    for (let i = 0; i < 22; i++) {
      // past the browser's own checks, as a script would post
      await page.evaluate(() => document.querySelectorAll("form").forEach((f) => (f.noValidate = true)));
      await page.getByLabel("Email").fill("not-an-address");
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === "POST" && r.url().includes("/password-reset")),
        page.getByRole("button", { name: "Send reset link" }).click(),
      ]);
      await page.getByTestId("form-message").waitFor();
      await page.waitForTimeout(100);
      answers.push((await page.getByTestId("form-message").textContent()) ?? "");
      if (answers.at(-1)!.includes("Too many")) break;
    }
    expect(answers.slice(0, -1).every((a) => a.includes("Check the highlighted fields"))).toBe(true);
    expect(answers.at(-1)).toContain("Too many requests");
    expect(answers).toHaveLength(21); // the reset form's limit is 20 a minute per address
  });
});
