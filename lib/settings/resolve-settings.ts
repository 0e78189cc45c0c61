import type { BankDetails, SettingKey, SignupDefaults, TwoFactorPolicy } from "./schemas";
import { DEFAULT_SIGNUP_DEFAULTS, SETTING_KEYS, signupDefaultsBody, twoFactorPolicyBody } from "./schemas";

/**
 * The settings in force from the console's rows and the environment (pure): a row wins over the
 * environment, a secret that cannot be opened (the key changed) does not, and each value says
 * where it came from.
 */
export type Source = "console" | "environment" | "default" | "none";

export interface SettingRow {
  key: string;
  value: unknown;
  secretCiphertext: string | null;
}

export interface EnvDefaults {
  smtpUrl?: string;
  webhookUrl?: string;
  emailFrom: string;
  emailTo: string[];
  cap: number;
  windowS: number;
  signupEnabled?: boolean;
  /** which of them the deployment set itself (not left to the built-in default) */
  set: Partial<Record<SettingKey, boolean>>;
}

export interface ResolvedSettings {
  notifications: { smtpUrl?: string; emailFrom: string; emailTo: string[]; webhookUrl?: string };
  remediation: { cap: number; windowS: number };
  bank: BankDetails | null;
  signup: { enabled: boolean; defaults: SignupDefaults };
  twoFactor: TwoFactorPolicy;
  sources: Record<SettingKey, Source>;
  unreadable: SettingKey[];
}

export function resolveSettings(rows: SettingRow[], env: EnvDefaults, open: (key: SettingKey, sealed: string) => string): ResolvedSettings {
  const byKey = new Map(rows.map((r) => [r.key as SettingKey, r]));
  const unreadable: SettingKey[] = [];
  const read = <T>(key: SettingKey): T | undefined => {
    const row = byKey.get(key);
    if (!row) return undefined;
    if (!SETTING_KEYS[key].secret) return (row.value ?? undefined) as T | undefined;
    try {
      return open(key, row.secretCiphertext ?? "") as T;
    } catch {
      unreadable.push(key);
      return undefined;
    }
  };
  const values = {
    smtpUrl: read<string>("notifications.smtp_url"),
    webhookUrl: read<string>("notifications.webhook_url"),
    emailFrom: read<string>("notifications.email_from"),
    emailTo: read<string[]>("notifications.email_to"),
    cap: read<number>("remediation.cap"),
    windowS: read<number>("remediation.window_s"),
    bank: read<BankDetails>("billing.bank_details"),
    signupEnabled: read<boolean>("signup.enabled"),
    signupDefaults: read<unknown>("signup.defaults"),
    twoFactor: read<unknown>("security.two_factor"),
  };
  // stored JSON is re-checked: a row written by an older version falls back to the defaults
  const defaults = signupDefaultsBody.safeParse(values.signupDefaults);
  const twoFactor = twoFactorPolicyBody.safeParse(values.twoFactor);
  const source = (key: SettingKey, own: unknown, envValue: unknown): Source =>
    own !== undefined ? "console" : env.set[key] ? "environment" : envValue === undefined ? "none" : "default";
  return {
    notifications: {
      smtpUrl: values.smtpUrl ?? env.smtpUrl,
      emailFrom: values.emailFrom ?? env.emailFrom,
      emailTo: values.emailTo ?? env.emailTo,
      webhookUrl: values.webhookUrl ?? env.webhookUrl,
    },
    remediation: { cap: values.cap ?? env.cap, windowS: values.windowS ?? env.windowS },
    bank: values.bank ?? null,
    signup: {
      enabled: typeof values.signupEnabled === "boolean" ? values.signupEnabled : (env.signupEnabled ?? false),
      defaults: defaults.success ? defaults.data : DEFAULT_SIGNUP_DEFAULTS,
    },
    twoFactor: twoFactor.success ? twoFactor.data : { operators: false, tenant_admins: false },
    sources: {
      "notifications.smtp_url": source("notifications.smtp_url", values.smtpUrl, env.smtpUrl),
      "notifications.webhook_url": source("notifications.webhook_url", values.webhookUrl, env.webhookUrl),
      "notifications.email_from": source("notifications.email_from", values.emailFrom, env.emailFrom),
      "notifications.email_to": source("notifications.email_to", values.emailTo, env.emailTo),
      "remediation.cap": source("remediation.cap", values.cap, env.cap),
      "remediation.window_s": source("remediation.window_s", values.windowS, env.windowS),
      "billing.bank_details": values.bank ? "console" : "none",
      "signup.enabled": source("signup.enabled", values.signupEnabled, env.signupEnabled ? true : undefined),
      "signup.defaults": defaults.success ? "console" : "default",
      "security.two_factor": twoFactor.success ? "console" : "default",
    },
    unreadable,
  };
}
