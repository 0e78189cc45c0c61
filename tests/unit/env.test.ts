import { describe, expect, it } from "vitest";
import { authSecret, ConfigError, inngestConfigured, parseEnv } from "@/lib/env";

describe("configuration", () => {
  it("applies defaults", () => {
    const e = parseEnv({});
    expect(e.DATABASE_POOL_SIZE).toBe(10);
    expect(e.BACKGROUND_DRIVER).toBe("auto");
    expect(e.DEMO_MODE).toBe(false);
    expect(e.API_BODY_LIMIT_BYTES).toBe(1024 * 1024);
  });

  it("names every bad variable in one clear message", () => {
    try {
      parseEnv({ DATABASE_URL: "mysql://x", DATABASE_POOL_SIZE: "lots", NEXTAUTH_SECRET: "short", BACKGROUND_DRIVER: "cron" });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const msg = (e as Error).message;
      for (const name of ["DATABASE_URL", "DATABASE_POOL_SIZE", "NEXTAUTH_SECRET", "BACKGROUND_DRIVER"]) expect(msg).toContain(name);
      expect(msg).toContain(".env.example");
    }
  });

  it("treats Inngest as configured only with keys (or dev mode with a base URL)", () => {
    expect(inngestConfigured(parseEnv({}))).toBe(false);
    expect(inngestConfigured(parseEnv({ INNGEST_EVENT_KEY: "e" }))).toBe(false);
    expect(inngestConfigured(parseEnv({ INNGEST_EVENT_KEY: "e", INNGEST_SIGNING_KEY: "s" }))).toBe(true);
    expect(inngestConfigured(parseEnv({ INNGEST_DEV: "1" }))).toBe(false);
    expect(inngestConfigured(parseEnv({ INNGEST_DEV: "1", INNGEST_BASE_URL: "http://127.0.0.1:8288" }))).toBe(true);
    expect(inngestConfigured(parseEnv({ INNGEST_EVENT_KEY: "e", INNGEST_SIGNING_KEY: "s", BACKGROUND_DRIVER: "in-process" }))).toBe(false);
  });

  it("refuses to run without an auth secret, in any mode", () => {
    expect(() => authSecret(parseEnv({ NODE_ENV: "production" }))).toThrow(/NEXTAUTH_SECRET/);
    expect(() => authSecret(parseEnv({ NODE_ENV: "production", DEMO_MODE: "1" }))).toThrow(/NEXTAUTH_SECRET/);
    expect(authSecret(parseEnv({ NODE_ENV: "production", NEXTAUTH_SECRET: "x".repeat(32) }))).toBe("x".repeat(32));
  });
});
