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
