import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, inject, it } from "vitest";
import { freePort } from "../../scripts/lib/embedded-db";
import { e2eServerEnv } from "../support/app-env";
import { unique } from "../support/fixtures";
import { api, expectErrorShape } from "../support/http";

// The public edge over real HTTP, through the app's own server. This server trusts one proxy hop
// (TRUSTED_PROXY_HOPS=1), and the test client plays that proxy: the last X-Forwarded-For entry it
// sends is the client address it vouches for; anything left of it is what the client claimed.

const through = (claimed: string, seenByProxy: string) => ({ "x-forwarded-for": `${claimed}, ${seenByProxy}` });

describe("forwarded-for spoofing", () => {
  it("rotating what a client claims in X-Forwarded-For does not get it past a public form's limit", async () => {
    const client = `198.51.100.${1 + Math.floor(Math.random() * 250)}`;
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) {
      const r = await api("POST", "/api/early-access", {
        body: { email: `${unique("spoof")}@example.test` },
        headers: through(`203.0.113.${i}`, client),
      });
      statuses.push(r.status);
    }
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(201));
    expect(statuses.slice(20)).toEqual([429, 429]);
    // another client is not affected
    expect(
      (
        await api("POST", "/api/early-access", {
          body: { email: `${unique("other")}@example.test` },
          headers: through("203.0.113.1", "198.51.100.251"),
        })
      ).status,
    ).toBe(201);
  });
});

describe("unauthenticated cost", () => {
  it("an address guessing keys is answered 429 before its guesses reach the database", async () => {
    const headers = through("1.1.1.1", `192.0.2.${1 + Math.floor(Math.random() * 250)}`);
    const statuses: number[] = [];
    for (let i = 0; i < 35; i++)
      statuses.push((await api("GET", "/api/tenants", { key: `gf_${String(i).padStart(43, "Z")}`, headers })).status);
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
    const limited = await api("GET", "/api/tenants", { key: `gf_${"Q".repeat(43)}`, headers });
    expect(limited.status).toBe(429);
    expectErrorShape(limited, "rate_limited");
  });

  it("anonymous requests are limited per address", async () => {
    const headers = through("1.1.1.1", `192.0.2.${1 + Math.floor(Math.random() * 250)}`);
    let last = 0;
    for (let i = 0; i < 601 && last !== 429; i++) last = (await api("GET", "/api/health", { headers })).status;
    expect(last).toBe(429);
    expect((await api("GET", "/api/health")).status).toBe(200);
  });

  it("the OpenAPI document is built once and revalidated by ETag", async () => {
    const first = await api("GET", "/api/openapi.json");
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"/);
    expect(first.headers.get("cache-control")).toContain("max-age");
    const again = await api("GET", "/api/openapi.json", { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
  });
});

describe("early access", () => {
  it("answers the same whether or not an address is already listed", async () => {
    const email = `${unique("listed")}@example.test`;
    const first = await api("POST", "/api/early-access", { body: { email } });
    const second = await api("POST", "/api/early-access", { body: { email } });
    const fresh = await api("POST", "/api/early-access", { body: { email: `${unique("fresh")}@example.test` } });
    expect([first.status, second.status, fresh.status]).toEqual([201, 201, 201]);
    expect(second.body).toEqual(first.body);
    expect(Object.keys(fresh.body.early_access)).toEqual(["email"]);
  });
});

describe("content security policy", () => {
  const nonceOf = (policy: string | null) => /'nonce-([A-Za-z0-9+/=]+)'/.exec(policy ?? "")?.[1];

  it("every page's scripts carry the nonce of its own response's policy, fresh per response", async () => {
    for (const page of ["/", "/login", "/blog/per-second-billing-in-integer-cents", "/use-cases/gpu-cluster-management", "/docs/api"]) {
      const res = await fetch(inject("baseUrl") + page);
      expect(res.status, page).toBe(200);
      const policy = res.headers.get("content-security-policy");
      expect(policy, page).toMatch(/script-src 'self' 'nonce-[^']+' 'strict-dynamic'/);
      expect(policy).toContain("object-src 'none'");
      expect(policy).toContain("frame-ancestors 'none'");
      expect(policy).not.toContain("unsafe-eval"); // a production server
      const nonce = nonceOf(policy)!;
      const html = await res.text();
      const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]!);
      expect(scripts.length, page).toBeGreaterThan(0);
      // each script Next rendered is allowed by this nonce (JSON-LD data blocks are not scripts that run)
      for (const attrs of scripts.filter((a) => !a.includes("application/ld+json"))) expect(attrs, page).toContain(`nonce="${nonce}"`);
      // over plain http there is no HSTS (it is set when NEXTAUTH_URL is https: tests/unit/security-edge)
      expect(res.headers.get("strict-transport-security")).toBeNull();
    }
    const [a, b] = await Promise.all([fetch(inject("baseUrl") + "/"), fetch(inject("baseUrl") + "/")]);
    expect(nonceOf(a.headers.get("content-security-policy"))).not.toBe(nonceOf(b.headers.get("content-security-policy")));
  });

  it("a nonce a client sends is not the one its page gets", async () => {
    const res = await fetch(inject("baseUrl") + "/login", {
      headers: { "content-security-policy": "script-src 'nonce-chosenbyclient'", "x-nonce": "chosenbyclient" },
    });
    expect(res.headers.get("content-security-policy")).not.toContain("chosenbyclient");
    expect(await res.text()).not.toContain("chosenbyclient");
  });

  it("the console's redirects carry the policy too, and the JSON API a fixed one that allows nothing", async () => {
    const redirect = await fetch(inject("baseUrl") + "/dashboard", { redirect: "manual" });
    expect(redirect.status).toBe(307);
    expect(redirect.headers.get("content-security-policy")).toContain("'strict-dynamic'");
    const json = await api("GET", "/api/health");
    expect(json.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
  });
});

describe("a bare next start", () => {
  it("refuses to serve: it would not append the socket address, so a client's X-Forwarded-For would choose its rate-limit bucket", async () => {
    const port = await freePort();
    const env = { ...e2eServerEnv(inject("databaseUrl")), NEXTAUTH_URL: `http://127.0.0.1:${port}`, NEXT_TELEMETRY_DISABLED: "1" };
    const child = spawn(
      process.execPath,
      [path.resolve("node_modules/next/dist/bin/next"), "start", "-p", String(port), "-H", "127.0.0.1"],
      {
        env,
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    // whatever answers while it starts, no request with a claimed address is ever served
    const served: number[] = [];
    const poke = setInterval(() => {
      fetch(`http://127.0.0.1:${port}/api/health`, { headers: { "x-forwarded-for": "203.0.113.9" } })
        .then((r) => r.status < 500 && served.push(r.status))
        .catch(() => {});
    }, 200);
    try {
      const code = await Promise.race([exited, new Promise<"running">((r) => setTimeout(() => r("running"), 90_000))]);
      expect(code).toBe(78);
      expect(stderr).toContain("refusing to start");
      expect(stderr).toContain("npm start");
      expect(served).toEqual([]);
    } finally {
      clearInterval(poke);
      child.kill("SIGKILL");
    }
  }, 120_000);
});
