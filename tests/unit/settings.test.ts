import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { decodeKey, parseEnv } from "@/lib/env";
import { resolveSettings, type EnvDefaults } from "@/lib/settings/resolve-settings";
import { notificationSettingsBody, remediationSettingsBody, secretHost } from "@/lib/settings/schemas";
import { openSecret, sealSecret } from "@/lib/settings/secret-box";

const key = randomBytes(32);
const env: EnvDefaults = {
  smtpUrl: undefined,
  webhookUrl: "https://hooks.env.example/T/1",
  emailFrom: "GPUForge <a@b.c>",
  emailTo: [],
  cap: 5,
  windowS: 600,
  set: { "notifications.webhook_url": true },
};
const open = (name: Parameters<typeof openSecret>[1], sealed: string) => openSecret(key, name, sealed);

describe("settings secrets at rest (AES-256-GCM)", () => {
  it("round-trips, never contains the plaintext, and differs every time", () => {
    const url = "smtp://ops:s3cret@mail.example.com:587";
    const a = sealSecret(key, "notifications.smtp_url", url);
    const b = sealSecret(key, "notifications.smtp_url", url);
    expect(a).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(a).not.toContain("s3cret");
    expect(a).not.toBe(b);
    expect(openSecret(key, "notifications.smtp_url", a)).toBe(url);
  });

  it("refuses another key, another setting's name (a copied row) and tampered bytes", () => {
    const sealed = sealSecret(key, "notifications.webhook_url", "https://hooks.example/T/secret");
    expect(() => openSecret(randomBytes(32), "notifications.webhook_url", sealed)).toThrow();
    expect(() => openSecret(key, "notifications.smtp_url", sealed)).toThrow();
    const [v, iv, tag, ct] = sealed.split(":");
    const flipped = Buffer.from(ct!, "base64");
    flipped[0] = flipped[0]! ^ 1;
    expect(() => openSecret(key, "notifications.webhook_url", [v, iv, tag, flipped.toString("base64")].join(":"))).toThrow();
  });

  it("takes a 32-byte key in base64 or hex from the environment, and names a bad one", () => {
    expect(decodeKey(key.toString("base64"))).toEqual(key);
    expect(decodeKey(key.toString("hex"))).toEqual(key);
    expect(decodeKey("too-short")).toBeNull();
    expect(() => parseEnv({ SETTINGS_ENCRYPTION_KEY: "not-a-key" })).toThrow(/SETTINGS_ENCRYPTION_KEY: must be 32 random bytes/);
    expect(parseEnv({ SETTINGS_ENCRYPTION_KEY: key.toString("base64") }).SETTINGS_ENCRYPTION_KEY).toBe(key.toString("base64"));
  });
});

describe("settings in force", () => {
  it("the environment is the default; a console value wins and says so", () => {
    const none = resolveSettings([], env, open);
    expect(none.notifications).toEqual({
      smtpUrl: undefined,
      webhookUrl: "https://hooks.env.example/T/1",
      emailFrom: "GPUForge <a@b.c>",
      emailTo: [],
    });
    expect(none.sources).toMatchObject({
      "notifications.webhook_url": "environment",
      "notifications.smtp_url": "none",
      "remediation.cap": "default",
      "billing.bank_details": "none",
    });
    const rows = [
      { key: "notifications.smtp_url", value: null, secretCiphertext: sealSecret(key, "notifications.smtp_url", "smtp://mail.local:25") },
      { key: "remediation.cap", value: 2, secretCiphertext: null },
      { key: "notifications.email_to", value: ["oncall@example.com"], secretCiphertext: null },
    ];
    const set = resolveSettings(rows, env, open);
    expect(set.notifications).toMatchObject({ smtpUrl: "smtp://mail.local:25", emailTo: ["oncall@example.com"] });
    expect(set.remediation).toEqual({ cap: 2, windowS: 600 });
    expect(set.sources).toMatchObject({
      "notifications.smtp_url": "console",
      "remediation.cap": "console",
      "remediation.window_s": "default",
    });
  });

  it("a secret the key cannot open falls back to the environment and is reported", () => {
    const rows = [
      {
        key: "notifications.webhook_url",
        value: null,
        secretCiphertext: sealSecret(randomBytes(32), "notifications.webhook_url", "https://hooks.old/x"),
      },
    ];
    const r = resolveSettings(rows, env, open);
    expect(r.notifications.webhookUrl).toBe("https://hooks.env.example/T/1");
    expect(r.unreadable).toEqual(["notifications.webhook_url"]);
    expect(r.sources["notifications.webhook_url"]).toBe("environment");
  });

  it("validates what operators type, in their words", () => {
    expect(notificationSettingsBody.safeParse({ smtp_url: "mail.example.com" }).error?.issues[0]?.message).toMatch(
      /smtp:\/\/ or smtps:\/\//,
    );
    expect(notificationSettingsBody.parse({ email_to: "a@example.com, b@example.com" }).email_to).toEqual([
      "a@example.com",
      "b@example.com",
    ]);
    expect(notificationSettingsBody.safeParse({ email_to: "a@example.com, nobody" }).success).toBe(false);
    expect(remediationSettingsBody.safeParse({ cap: 5, window_s: 30 }).error?.issues[0]?.message).toBe("At least 60 seconds");
    expect(secretHost("https://hooks.slack.com/services/T000/B000/XXXX")).toBe("hooks.slack.com");
    expect(secretHost("smtp://user:pass@mail.example.com:587")).toBe("mail.example.com:587");
  });
});
