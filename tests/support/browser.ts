import { existsSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { expect, inject } from "vitest";

// Playwright's own browser download cannot work offline, so we drive an installed Chromium:
// CHROMIUM_PATH, Debian's /usr/bin/chromium, or a browser Playwright installed elsewhere.
export function findChromium(): string {
  const candidates = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];
  try {
    candidates.push(chromium.executablePath());
  } catch {
    /* none installed by Playwright */
  }
  const found = candidates.find((p): p is string => Boolean(p && existsSync(p)));
  if (!found) {
    throw new Error(
      "No Chromium found for the browser tests. Install Debian's package (`apt-get install -y chromium`) " +
        "or set CHROMIUM_PATH to a Chromium/Chrome binary. The browser suite never skips silently.",
    );
  }
  return found;
}

// Every page is served with a Content-Security-Policy (proxy.ts): a script or resource it refuses
// is a broken page, whichever test happens to be on it. Chromium reports each refusal on the console.
const violations = new WeakMap<Page, string[]>();

export async function launchBrowser(): Promise<Browser> {
  // playwright-core gives every launch a fresh, empty profile of its own.
  const browser = await chromium.launch({
    executablePath: findChromium(),
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  // every context a test opens on this browser reports what its pages' policy refused (shot() checks)
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (...args) => {
    const context = await newContext(...args);
    context.on("console", (m) => {
      const page = m.page();
      if (page && /Content Security Policy/i.test(m.text())) {
        if (!violations.has(page)) violations.set(page, []);
        violations.get(page)!.push(`${page.url()}: ${m.text()}`);
      }
    });
    return context;
  };
  return browser;
}

/** A fresh browser context on `target`, signed in through the login form when a user is given. */
export async function openPage(
  browser: Browser,
  target: string,
  user?: { email: string; password: string },
  viewport = { width: 1400, height: 1000 },
): Promise<Page> {
  const page = await (await browser.newContext({ viewport })).newPage();
  const base = inject("baseUrl");
  if (!user) {
    await page.goto(`${base}${target}`);
    return page;
  }
  await page.goto(`${base}/login?callbackUrl=${encodeURIComponent(target)}`);
  await page.fill("#f-email", user.email);
  await page.fill("#f-password", user.password);
  await page.click("form[aria-label='Sign in'] button[type=submit]");
  await page.waitForURL(`${base}${target}`);
  return page;
}

/** What the Content-Security-Policy refused on this page so far. */
export const policyViolations = (page: Page): string[] => violations.get(page) ?? [];

/** A full-page screenshot kept with the test results; the page must not have had a script or resource refused by its policy. */
export async function shot(page: Page, name: string) {
  await page.screenshot({ path: path.join(inject("artifactsDir"), "screenshots", `${name}.png`), fullPage: true });
  const refused = policyViolations(page);
  if (refused.length) throw new Error(`the Content-Security-Policy refused something on ${name}:\n${refused.join("\n")}`);
}

/**
 * Answers the product's own confirmation dialog (never the browser's confirm()): both buttons must
 * name what they do, focus starts on the safe one, and the action's button is pressed.
 */
export async function confirmInDialog(page: Page, labels: { confirm: string; keep: string }) {
  const dialog = page.getByRole("dialog");
  const keep = dialog.getByRole("button", { name: labels.keep, exact: true });
  await keep.waitFor();
  await expect.poll(() => keep.evaluate((el) => el === document.activeElement)).toBe(true);
  await dialog.getByRole("button", { name: labels.confirm, exact: true }).click();
  await dialog.waitFor({ state: "hidden" });
}

/**
 * The console's 404 for the page open now: the branded page naming what is missing ("No such
 * job"), inside the plane's shell, answered with HTTP 404 (asked again with the page's session).
 */
export async function expectNotFound(page: Page, noun: string) {
  await page.getByRole("heading", { name: `No such ${noun}`, level: 1 }).waitFor();
  expect((await page.request.get(page.url())).status()).toBe(404);
}
