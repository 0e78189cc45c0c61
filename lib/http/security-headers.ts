// The headers every HTML page is served with (proxy.ts sets them per request). Pure: the caller
// passes the nonce and what it read from the configuration.
//
// The threat: script that is not ours running in a page of the app's origin (an injection through
// a tenant-controlled string rendered by mistake, a compromised third-party tag). Such a script
// acts with the visitor's session cookie: it can call every /api route as an operator. The policy
// lets a page run only the scripts Next.js renders for it, each carrying this response's nonce
// (Next reads the nonce from the request's Content-Security-Policy header and puts it on its
// bootstrap and inline flight-data scripts); 'strict-dynamic' extends that trust to the chunks those
// scripts load, and to nothing written into the markup. A nonce is fresh per response, so every
// page is rendered per request (the root layout reads the request headers).
//
// Styles keep 'unsafe-inline': React writes style attributes, and a style cannot run code.

/** A fresh nonce: 16 random bytes, base64 (what CSP's nonce-source accepts). */
export function newNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}

export interface PolicyOptions {
  nonce: string;
  /** next dev: React's development build evaluates code for its stack traces */
  dev: boolean;
  /** served over https (NEXTAUTH_URL): plain-http subresources are upgraded */
  https: boolean;
  /** the optional GA4 tag (NEXT_PUBLIC_GA_ID): where it sends its measurements */
  analytics: boolean;
}

export function contentSecurityPolicy(o: PolicyOptions): string {
  const analytics = o.analytics ? " https://*.google-analytics.com https://*.analytics.google.com https://*.googletagmanager.com" : "";
  const directives = [
    "default-src 'self'",
    `script-src 'self' 'nonce-${o.nonce}' 'strict-dynamic'${o.dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data: blob:${analytics}`,
    "font-src 'self' data:",
    `connect-src 'self'${analytics}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    ...(o.https ? ["upgrade-insecure-requests"] : []),
  ];
  return directives.join("; ");
}

/**
 * What JSON and file responses under /api carry (next.config.ts): nothing in them may run or load
 * anything, should a browser ever be talked into rendering one.
 */
export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";

/**
 * Strict-Transport-Security for an app served over https: two years, subdomains included (the
 * session cookie must never travel in the clear, and a first visit over plain http is the moment
 * it could). Null over plain http, where the header would mean nothing (browsers ignore it).
 */
export function strictTransportSecurity(appUrl: string | undefined): string | null {
  if (!appUrl) return null;
  try {
    return new URL(appUrl).protocol === "https:" ? "max-age=63072000; includeSubDomains" : null;
  } catch {
    return null;
  }
}

/** The request header proxy.ts passes the nonce on in, for the scripts a layout renders itself (next/script). */
export const NONCE_HEADER = "x-nonce";
