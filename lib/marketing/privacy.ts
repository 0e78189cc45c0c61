// Privacy rules of first-party analytics, pure.
import { createHash } from "node:crypto";

/** Visitors who ask not to be tracked (Do Not Track, Global Privacy Control) are not recorded. */
export function trackingRefused(headers: Headers): boolean {
  return headers.get("dnt") === "1" || headers.get("sec-gpc") === "1";
}

/**
 * An anonymous session: a hash of the day, the address and the browser, salted with the app's
 * secret. No cookie; it cannot be followed from one day to the next, and the address is never stored.
 */
export function sessionHash(ip: string, userAgent: string, salt: string, now = new Date()): string {
  return createHash("sha256")
    .update(`${now.toISOString().slice(0, 10)}|${ip}|${userAgent}|${salt}`)
    .digest("hex");
}

/** Only the referring site's host is kept, and none for the site's own pages. */
export function referrerHost(referrer: string | undefined, ownHost: string | null): string | null {
  if (!referrer) return null;
  try {
    const host = new URL(referrer).host.toLowerCase();
    return host && host !== ownHost?.toLowerCase() ? host.slice(0, 253) : null;
  } catch {
    return null;
  }
}
