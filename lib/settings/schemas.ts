import { z } from "zod";

/**
 * What operators can set in the console (pure). Each key maps to one row of platform_settings;
 * the environment variable named beside it is its default. Secret keys are stored encrypted and
 * never shown again, only whether they are set and the host they point at.
 */
export const SETTING_KEYS = {
  "notifications.smtp_url": { env: "SMTP_URL", secret: true },
  "notifications.email_from": { env: "ALERT_EMAIL_FROM", secret: false },
  "notifications.email_to": { env: "ALERT_EMAIL_TO", secret: false },
  "notifications.webhook_url": { env: "ALERT_WEBHOOK_URL", secret: true },
  "remediation.cap": { env: "REMEDIATION_CAP", secret: false },
  "remediation.window_s": { env: "REMEDIATION_WINDOW_S", secret: false },
  "billing.bank_details": { env: null, secret: false },
  "signup.enabled": { env: "SELF_SERVICE_SIGNUP", secret: false },
  "signup.defaults": { env: null, secret: false },
  "security.two_factor": { env: null, secret: false },
} as const;
export type SettingKey = keyof typeof SETTING_KEYS;

const emailList = z
  .string()
  .trim()
  .max(2000)
  .transform((v) =>
    v
      .split(/[,\s]+/)
      .map((x) => x.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.email("Each recipient must be an email address")).max(50));

/** `undefined`: leave as it is; `null`: remove the console's value (back to the environment's). */
export const notificationSettingsBody = z.strictObject({
  smtp_url: z
    .string()
    .trim()
    .regex(/^smtps?:\/\/[^\s]+$/, "An smtp:// or smtps:// address, e.g. smtp://user:password@mail.example.com:587")
    .max(2000)
    .nullable()
    .optional(),
  email_from: z.string().trim().min(3).max(200).nullable().optional(),
  email_to: emailList.nullable().optional(),
  webhook_url: z
    .url({ protocol: /^https?$/, error: "A full http(s):// address" })
    .max(2000)
    .nullable()
    .optional(),
});

export const remediationSettingsBody = z.strictObject({
  cap: z.number({ error: "A whole number" }).int("A whole number").min(0, "0 or more (0: never quarantine automatically)").max(10_000),
  window_s: z
    .number({ error: "A whole number of seconds" })
    .int("A whole number of seconds")
    .min(60, "At least 60 seconds")
    .max(7 * 86_400, "At most 7 days"),
});

export const bankDetailsBody = z.strictObject({
  account_name: z.string().trim().min(1, "Whose account it is").max(200),
  iban: z.string().trim().max(64).optional(),
  bic: z.string().trim().max(32).optional(),
  bank_name: z.string().trim().max(200).optional(),
  instructions: z.string().trim().max(1000).optional(),
});
export type BankDetails = z.output<typeof bankDetailsBody>;

/** The host a secret URL points at: all a page ever shows of it. */
export function secretHost(url: string | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

/**
 * What a self-service sign-up starts with (issue 29): conservative by default, raised per tenant by
 * an operator. A null limit is no limit. Burst to providers needs a price cap, as on every tenant.
 */
export const signupDefaultsBody = z
  .strictObject({
    gpu_quota: z.number({ error: "A whole number" }).int("A whole number").min(0).max(1_000_000),
    max_priority: z.number({ error: "A whole number" }).int("A whole number").min(1).max(10),
    burst_enabled: z.boolean(),
    burst_max_price_cents_per_gpu_hour: z
      .number({ error: "Whole cents" })
      .int("Whole cents")
      .min(1, "More than 0")
      .max(10_000_000)
      .nullable(),
    max_pods: z.number({ error: "A whole number" }).int("A whole number").min(0).max(10_000).nullable(),
    max_reservation_hours: z
      .number({ error: "A whole number of hours" })
      .int("A whole number of hours")
      .min(1)
      .max(366 * 24)
      .nullable(),
    max_reservations: z.number({ error: "A whole number" }).int("A whole number").min(0).max(10_000).nullable(),
  })
  .refine((d) => !d.burst_enabled || d.burst_max_price_cents_per_gpu_hour !== null, {
    message: "Bursting needs a price cap per GPU-hour",
    path: ["burst_max_price_cents_per_gpu_hour"],
  });
export type SignupDefaults = z.output<typeof signupDefaultsBody>;

export const DEFAULT_SIGNUP_DEFAULTS: SignupDefaults = {
  gpu_quota: 4,
  max_priority: 5,
  burst_enabled: false,
  burst_max_price_cents_per_gpu_hour: null,
  max_pods: 2,
  max_reservation_hours: 24,
  max_reservations: 1,
};

/** Who must sign in with a second factor (they are asked to enrol at their next page). */
export const twoFactorPolicyBody = z.strictObject({ operators: z.boolean(), tenant_admins: z.boolean() });
export type TwoFactorPolicy = z.output<typeof twoFactorPolicyBody>;
