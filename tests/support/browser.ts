import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

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

export async function launchBrowser(): Promise<Browser> {
  // playwright-core gives every launch a fresh, empty profile of its own.
  return chromium.launch({
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
}
