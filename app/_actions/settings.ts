"use server";
import { z } from "zod";
import { formInt, formText, serverAction } from "@/lib/auth/action";
import { env } from "@/lib/env";
import {
  bankDetailsBody,
  notificationSettingsBody,
  remediationSettingsBody,
  signupDefaultsBody,
  twoFactorPolicyBody,
} from "@/lib/settings/schemas";
import { forgetTwoFactorPolicy } from "@/lib/users/principal-for-user";
import { sendTestNotification } from "@/lib/settings/send-test-notification";
import { updateSettings } from "@/lib/settings/update-settings";

const pages = ["/admin/settings", "/admin/alerts/notifications", "/admin/alerts/remediations"];

/** A secret input left empty keeps what is stored; "remove" drops the console's value. */
const secretField = (f: FormData, name: string) => (f.get(`remove_${name}`) === "on" ? null : formText(f, name));
/** A plain input emptied, or left at the environment's value, goes back to following the environment. */
const plainField = (f: FormData, name: string, envValue: string) => {
  const v = formText(f, name);
  return v === undefined || v.trim() === envValue ? null : v;
};

export const saveNotificationSettingsAction = serverAction(
  {
    schema: notificationSettingsBody,
    fromForm: (f) => ({
      smtp_url: secretField(f, "smtp_url"),
      webhook_url: secretField(f, "webhook_url"),
      email_from: plainField(f, "email_from", env().ALERT_EMAIL_FROM),
      email_to: plainField(f, "email_to", env().ALERT_EMAIL_TO.join(", ")),
    }),
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, input) => {
    const { changed } = await updateSettings(actor, {
      "notifications.smtp_url": input.smtp_url,
      "notifications.webhook_url": input.webhook_url,
      "notifications.email_from": input.email_from,
      "notifications.email_to": input.email_to,
    });
    return { message: changed.length ? "Notification channels saved. New alerts use them at once." : "Nothing changed." };
  },
);

export const saveRemediationSettingsAction = serverAction(
  {
    schema: z.union([remediationSettingsBody, z.strictObject({ reset: z.literal(true) })]),
    fromForm: (f) => (f.get("reset") === "1" ? { reset: true } : { cap: formInt(f, "cap"), window_s: formInt(f, "window_s") }),
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, input) => {
    if ("reset" in input) {
      await updateSettings(actor, { "remediation.cap": null, "remediation.window_s": null });
      return { message: "The deployment's cap applies again." };
    }
    await updateSettings(actor, { "remediation.cap": input.cap, "remediation.window_s": input.window_s });
    return {
      message: `At most ${input.cap} automatic quarantine${input.cap === 1 ? "" : "s"} per ${Math.round(input.window_s / 60)} min, fleet-wide, from now on.`,
    };
  },
);

export const saveBankDetailsAction = serverAction(
  {
    schema: z.union([bankDetailsBody, z.strictObject({ remove: z.literal(true) })]),
    fromForm: (f) =>
      f.get("remove") === "1"
        ? { remove: true }
        : {
            account_name: formText(f, "account_name") ?? "",
            iban: formText(f, "iban"),
            bic: formText(f, "bic"),
            bank_name: formText(f, "bank_name"),
            instructions: formText(f, "instructions"),
          },
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, input) => {
    await updateSettings(actor, { "billing.bank_details": "remove" in input ? null : input });
    return {
      message:
        "remove" in input
          ? "Bank details removed; tenants are asked to contact you to pay by transfer."
          : "Bank details saved; tenants see them on their payment pages.",
    };
  },
);

export const sendTestNotificationAction = serverAction(
  { schema: z.object({}), fromForm: () => ({}), access: ["operator"] },
  async (actor) => {
    const results = await sendTestNotification(actor);
    if (results.length === 0) return { message: "No channel is set up: add an email server or a webhook above first.", data: { results } };
    const failed = results.filter((r) => !r.ok).length;
    return {
      message: failed
        ? `${failed} of ${results.length} channels failed; see below.`
        : `Test sent through ${results.map((r) => r.channel).join(" and ")}.`,
      data: { results },
    };
  },
);

/** Self-service sign-up: on or off, and what a sign-up starts with. */
export const saveSelfServiceSettingsAction = serverAction(
  {
    schema: z.strictObject({ enabled: z.boolean(), defaults: signupDefaultsBody }),
    fromForm: (f) => {
      const nullable = (name: string) => (formText(f, name) === undefined ? null : formInt(f, name));
      return {
        enabled: f.get("enabled") === "on",
        defaults: {
          gpu_quota: formInt(f, "gpu_quota"),
          max_priority: formInt(f, "max_priority"),
          burst_enabled: f.get("burst_enabled") === "on",
          burst_max_price_cents_per_gpu_hour: formText(f, "burst_price") === undefined ? null : dollarsToCents(formText(f, "burst_price")),
          max_pods: nullable("max_pods"),
          max_reservation_hours: nullable("max_reservation_hours"),
          max_reservations: nullable("max_reservations"),
        },
      };
    },
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, input) => {
    await updateSettings(actor, { "signup.enabled": input.enabled, "signup.defaults": input.defaults });
    return {
      message: input.enabled ? "Self-service sign-up is on; new sign-ups start with these defaults." : "Self-service sign-up is off.",
    };
  },
);

/** Who must sign in with a second factor. */
export const saveTwoFactorPolicyAction = serverAction(
  {
    schema: twoFactorPolicyBody,
    fromForm: (f) => ({ operators: f.get("operators") === "on", tenant_admins: f.get("tenant_admins") === "on" }),
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, input) => {
    await updateSettings(actor, { "security.two_factor": input });
    forgetTwoFactorPolicy();
    const who = [input.operators ? "operators" : null, input.tenant_admins ? "tenant admins" : null].filter(Boolean).join(" and ");
    return {
      message: who
        ? `Two-factor sign-in is now required for ${who}; they enrol at their next page.`
        : "Two-factor sign-in is optional for everyone.",
    };
  },
);

/** "12.50" → 1250 cents; anything else is passed on for the schema to name. */
function dollarsToCents(v: string | undefined) {
  if (v === undefined) return undefined;
  const clean = v.replace(/[$,\s]/g, "");
  return /^\d+(\.\d{1,2})?$/.test(clean) ? Math.round(Number(clean) * 100) : v;
}
