import { beforeAll, describe, expect, it } from "vitest";
import { NextRequest } from "next/server";
import { contentSecurityPolicy, newNonce, strictTransportSecurity } from "@/lib/http/security-headers";
import { markOwnServer, servedByOwnServer } from "@/lib/http/own-server";

// What every page is served with (issue 27 item 7): proxy.ts puts a fresh nonce in the
// Content-Security-Policy of the response and of the request Next.js renders from (Next reads the
// nonce there for its own scripts), and HSTS when the app's address is https.

let proxy: typeof import("@/proxy").proxy;
beforeAll(async () => {
  process.env.NEXTAUTH_URL = "https://cp.example";
  process.env.NEXTAUTH_SECRET ??= "x".repeat(32);
  ({ proxy } = await import("@/proxy"));
});

describe("the policy", () => {
  it("runs only scripts with this response's nonce and what they load, never eval in production, and embeds nowhere", () => {
    const policy = contentSecurityPolicy({ nonce: "abc", dev: false, https: true, analytics: false });
    expect(policy).toContain("script-src 'self' 'nonce-abc' 'strict-dynamic'");
    expect(policy).not.toContain("unsafe-eval");
    expect(policy).not.toMatch(/script-src[^;]*unsafe-inline/);
    for (const d of ["object-src 'none'", "base-uri 'self'", "form-action 'self'", "frame-ancestors 'none'", "upgrade-insecure-requests"])
      expect(policy).toContain(d);
    expect(contentSecurityPolicy({ nonce: "abc", dev: true, https: false, analytics: false })).toContain("'unsafe-eval'");
    expect(contentSecurityPolicy({ nonce: "abc", dev: false, https: false, analytics: false })).not.toContain("upgrade-insecure-requests");
    expect(contentSecurityPolicy({ nonce: "abc", dev: false, https: false, analytics: true })).toMatch(
      /connect-src 'self' https:\/\/\*\.google-analytics\.com/,
    );
  });

  it("nonces are 128 random bits, never repeated", () => {
    const seen = new Set(Array.from({ length: 1000 }, newNonce));
    expect(seen.size).toBe(1000);
    for (const n of seen) expect(Buffer.from(n, "base64")).toHaveLength(16);
  });

  it("HSTS only for an https address", () => {
    expect(strictTransportSecurity("https://cp.example")).toBe("max-age=63072000; includeSubDomains");
    expect(strictTransportSecurity("http://cp.example")).toBeNull();
    expect(strictTransportSecurity(undefined)).toBeNull();
    expect(strictTransportSecurity("not a url")).toBeNull();
  });
});

describe("proxy.ts", () => {
  it("gives each page a fresh nonce, in the response and in the request Next renders from, and HSTS over https", async () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const res = await proxy(
        new NextRequest("https://cp.example/", { headers: { "content-security-policy": "script-src *", "x-nonce": "mine" } }),
      );
      const policy = res.headers.get("content-security-policy")!;
      const nonce = /'nonce-([^']+)'/.exec(policy)![1]!;
      nonces.add(nonce);
      // the request headers Next renders the page with (NextResponse.next({ request: { headers } }))
      expect(res.headers.get("x-middleware-request-content-security-policy")).toBe(policy);
      expect(res.headers.get("x-middleware-request-x-nonce")).toBe(nonce);
      expect(res.headers.get("strict-transport-security")).toBe("max-age=63072000; includeSubDomains");
    }
    expect(nonces.size).toBe(3);
  });

  it("an anonymous visitor of a plane is sent to sign-in, and that answer carries the headers too", async () => {
    const res = await proxy(new NextRequest("https://cp.example/admin/nodes?x=1"));
    expect(res.status).toBe(307);
    expect(res.headers.get("location")).toBe("https://cp.example/login?callbackUrl=%2Fadmin%2Fnodes%3Fx%3D1");
    expect(res.headers.get("content-security-policy")).toContain("'strict-dynamic'");
    expect(res.headers.get("strict-transport-security")).not.toBeNull();
  });

  it("runs for pages only: not the JSON API, the gateway, the installer or static files", async () => {
    const { config } = await import("@/proxy");
    const matcher = new RegExp(`^${config.matcher[0]!}$`);
    for (const p of ["/", "/login", "/admin", "/dashboard/api-keys", "/blog/x", "/docs/api", "/apidocs"])
      expect(matcher.test(p), p).toBe(true);
    for (const p of [
      "/api/health",
      "/v1/endpoints/x/chat",
      "/install.sh",
      "/install/agent.tgz",
      "/_next/static/a.js",
      "/favicon.ico",
      "/icons/icon.svg",
      "/manifest.webmanifest",
    ])
      expect(matcher.test(p), p).toBe(false);
  });
});

describe("the app's own server", () => {
  it("is a mark on the process that only scripts/serve.ts sets", () => {
    expect(servedByOwnServer()).toBe(false);
    markOwnServer();
    expect(servedByOwnServer()).toBe(true);
  });
});
