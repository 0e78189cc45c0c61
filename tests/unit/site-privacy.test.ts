import { describe, expect, it } from "vitest";
import { referrerHost, sessionHash, trackingRefused } from "@/lib/marketing/privacy";

describe("first-party analytics privacy", () => {
  it("honours Do Not Track and Global Privacy Control", () => {
    expect(trackingRefused(new Headers({ dnt: "1" }))).toBe(true);
    expect(trackingRefused(new Headers({ "sec-gpc": "1" }))).toBe(true);
    expect(trackingRefused(new Headers({ dnt: "0" }))).toBe(false);
    expect(trackingRefused(new Headers())).toBe(false);
  });
  it("keeps only the referring host, none for the site itself or garbage", () => {
    expect(referrerHost("https://www.google.com/search?q=gpu+cluster", "gpuforge.example.com")).toBe("www.google.com");
    expect(referrerHost("https://GPUForge.example.com/blog", "gpuforge.example.com")).toBeNull();
    expect(referrerHost("not a url", null)).toBeNull();
    expect(referrerHost(undefined, null)).toBeNull();
  });
  it("an anonymous session changes every day and never contains the address", () => {
    const day1 = sessionHash("203.0.113.9", "Firefox", "salt", new Date("2026-11-30T10:00:00Z"));
    expect(day1).toMatch(/^[0-9a-f]{64}$/);
    expect(day1).not.toContain("203.0.113.9");
    expect(sessionHash("203.0.113.9", "Firefox", "salt", new Date("2026-11-30T23:59:00Z"))).toBe(day1);
    expect(sessionHash("203.0.113.9", "Firefox", "salt", new Date("2026-12-01T00:01:00Z"))).not.toBe(day1);
    expect(sessionHash("203.0.113.10", "Firefox", "salt", new Date("2026-11-30T10:00:00Z"))).not.toBe(day1);
  });
});
