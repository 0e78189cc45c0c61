import "server-only";
import { db } from "@/lib/db/client";
import { decodeKey, env, envIsSet } from "@/lib/env";
import { logger } from "@/lib/logger";
import { resolveSettings, type ResolvedSettings, type Source } from "./resolve-settings";
import { secretHost, type BankDetails, type SignupDefaults, type TwoFactorPolicy } from "./schemas";
import { openSecret } from "./secret-box";

/**
 * The settings in force: a console value where an operator set one, else the deployment's
 * environment. Read on every use (a few rows), so a change applies at once on every instance.
 */

export type EffectiveSettings = Pick<ResolvedSettings, "notifications" | "remediation" | "bank" | "signup" | "twoFactor">;

/** What the settings page may show: values, where each comes from, and of secrets only whether they are set and their host. */
export interface SettingsView {
  encryption: boolean;
  stripe: boolean;
  smtp: { source: Source; host: string | null; unreadable: boolean };
  webhook: { source: Source; host: string | null; unreadable: boolean };
  emailFrom: { value: string; source: Source };
  emailTo: { value: string[]; source: Source };
  cap: { value: number; source: Source };
  windowS: { value: number; source: Source };
  bank: { value: BankDetails | null; source: Source };
  signup: { enabled: boolean; source: Source; defaults: SignupDefaults };
  twoFactor: TwoFactorPolicy;
  updatedAt: string | null;
  updatedBy: string | null;
}

export function settingsKey(): Buffer | null {
  const v = env().SETTINGS_ENCRYPTION_KEY;
  return v ? decodeKey(v) : null;
}

async function load() {
  const rows = await db().platformSetting.findMany();
  const e = env();
  const key = settingsKey();
  const resolved = resolveSettings(
    rows,
    {
      smtpUrl: e.SMTP_URL,
      webhookUrl: e.ALERT_WEBHOOK_URL,
      emailFrom: e.ALERT_EMAIL_FROM,
      emailTo: e.ALERT_EMAIL_TO,
      cap: e.REMEDIATION_CAP,
      windowS: e.REMEDIATION_WINDOW_S,
      signupEnabled: e.SELF_SERVICE_SIGNUP,
      set: {
        "notifications.smtp_url": envIsSet("SMTP_URL"),
        "notifications.webhook_url": envIsSet("ALERT_WEBHOOK_URL"),
        "notifications.email_from": envIsSet("ALERT_EMAIL_FROM"),
        "notifications.email_to": envIsSet("ALERT_EMAIL_TO"),
        "remediation.cap": envIsSet("REMEDIATION_CAP"),
        "remediation.window_s": envIsSet("REMEDIATION_WINDOW_S"),
        "signup.enabled": envIsSet("SELF_SERVICE_SIGNUP"),
      },
    },
    (name, sealed) => {
      if (!key) throw new Error("no settings key");
      return openSecret(key, name, sealed);
    },
  );
  if (resolved.unreadable.length)
    logger.warn("stored settings secrets cannot be read with this key; the environment's values apply", { keys: resolved.unreadable });
  return { rows, resolved };
}

export async function effectiveSettings(): Promise<EffectiveSettings> {
  const { resolved } = await load();
  return {
    notifications: resolved.notifications,
    remediation: resolved.remediation,
    bank: resolved.bank,
    signup: resolved.signup,
    twoFactor: resolved.twoFactor,
  };
}

export async function settingsView(): Promise<SettingsView> {
  const { rows, resolved: r } = await load();
  const newest = [...rows].sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime())[0];
  return {
    encryption: settingsKey() !== null,
    stripe: Boolean(env().STRIPE_SECRET_KEY),
    smtp: {
      source: r.sources["notifications.smtp_url"],
      host: secretHost(r.notifications.smtpUrl),
      unreadable: r.unreadable.includes("notifications.smtp_url"),
    },
    webhook: {
      source: r.sources["notifications.webhook_url"],
      host: secretHost(r.notifications.webhookUrl),
      unreadable: r.unreadable.includes("notifications.webhook_url"),
    },
    emailFrom: { value: r.notifications.emailFrom, source: r.sources["notifications.email_from"] },
    emailTo: { value: r.notifications.emailTo, source: r.sources["notifications.email_to"] },
    cap: { value: r.remediation.cap, source: r.sources["remediation.cap"] },
    windowS: { value: r.remediation.windowS, source: r.sources["remediation.window_s"] },
    bank: { value: r.bank, source: r.sources["billing.bank_details"] },
    signup: { enabled: r.signup.enabled, source: r.sources["signup.enabled"], defaults: r.signup.defaults },
    twoFactor: r.twoFactor,
    updatedAt: newest?.updatedAt.toISOString() ?? null,
    updatedBy: newest?.updatedBy ?? null,
  };
}
