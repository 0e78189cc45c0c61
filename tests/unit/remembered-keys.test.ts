import { describe, expect, it } from "vitest";
import { RememberedKeys } from "@/lib/api-keys/remembered-keys";
import type { AgentPrincipal } from "@/lib/auth/principal";

const agent = (clusterId: string): AgentPrincipal => ({ kind: "agent", clusterId, keyId: `key-${clusterId}`, label: "key gf_x…" });

function keys(ttlMs = 30_000, maxEntries = 100) {
  let now = 1_000_000;
  const listening = { live: true };
  const k = new RememberedKeys({ ttlMs, maxEntries, trusted: () => listening.live, now: () => now });
  return { k, listening, advance: (ms: number) => (now += ms) };
}

describe("remembered agent keys", () => {
  it("recalls a remembered key until its time is up", () => {
    const { k, advance } = keys(30_000);
    k.remember(k.ticket(), "h1", agent("c1"));
    expect(k.recall("h1")).toEqual(agent("c1"));
    advance(29_999);
    expect(k.recall("h1")).toEqual(agent("c1"));
    advance(1);
    expect(k.recall("h1")).toBeUndefined();
    expect(k.size).toBe(0);
  });

  it("never past the key's own expiry, however long the TTL", () => {
    const { k, advance } = keys(30_000);
    k.remember(k.ticket(), "h1", agent("c1"), 1_000_000 + 5_000);
    advance(4_999);
    expect(k.recall("h1")).toEqual(agent("c1"));
    advance(1);
    expect(k.recall("h1")).toBeUndefined();
  });

  it("never remembers a lookup that began before a forget (a revocation racing the check)", () => {
    const { k } = keys();
    const ticket = k.ticket(); // the lookup reads the key as valid…
    k.forget(); // …while its revocation commits and the notification arrives
    k.remember(ticket, "h1", agent("c1"));
    expect(k.recall("h1")).toBeUndefined();
    // a lookup that begins afterwards is remembered
    k.remember(k.ticket(), "h1", agent("c1"));
    expect(k.recall("h1")).toEqual(agent("c1"));
  });

  it("forgets everything at once", () => {
    const { k } = keys();
    k.remember(k.ticket(), "h1", agent("c1"));
    k.remember(k.ticket(), "h2", agent("c2"));
    k.forget();
    expect(k.recall("h1")).toBeUndefined();
    expect(k.recall("h2")).toBeUndefined();
  });

  it("trusts nothing, and remembers nothing, while nobody listens for changes", () => {
    const { k, listening } = keys();
    k.remember(k.ticket(), "h1", agent("c1"));
    listening.live = false;
    expect(k.recall("h1")).toBeUndefined();
    expect(k.ticket()).toBeNull();
    k.remember(null, "h2", agent("c2"));
    listening.live = true;
    expect(k.recall("h2")).toBeUndefined();
  });

  it("remembers nothing with a time of zero, and stays within its bound", () => {
    const zero = keys(0).k;
    zero.remember(zero.ticket(), "h1", agent("c1"));
    expect(zero.recall("h1")).toBeUndefined();
    const { k } = keys(30_000, 2);
    for (const h of ["a", "b", "c"]) k.remember(k.ticket(), h, agent(h));
    expect(k.size).toBeLessThanOrEqual(2);
    expect(k.recall("c")).toEqual(agent("c"));
  });
});
