import { describe, expect, it } from "vitest";
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
