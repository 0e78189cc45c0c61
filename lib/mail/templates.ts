import { formatCents } from "@/lib/billing/money";
import { renderMail, type RenderedMail } from "./layout";

// What each account mail says, pure. Links that carry a token are passed in: the outbox renders a
// mail twice, with the real links (sealed until sent) and with them withheld (what the database and
// the operators' console show).

export const MAIL_KINDS = [
  "verify_email",
  "signup_exists",
  "password_reset",
  "password_changed",
  "new_sign_in",
  "two_factor_changed",
  "deposit_receipt",
  "deposit_refunded",
  "low_balance",
] as const;

export interface Site {
  product: string;
  publicUrl: string;
}

const when = (d: Date) => `${d.toISOString().replace("T", " ").slice(0, 16)} UTC`;
const url = (s: Site, path: string) => `${s.publicUrl.replace(/\/+$/, "")}${path}`;

export type MailData =
  | { kind: "verify_email"; company: string; link: string; expiresHours: number }
  | {
      kind: "signup_exists";
      /**
       * the existing account is still unverified: its address's owner can confirm it by choosing its
       * password (a password reset link: whoever signed up first may not have been the owner, and
       * their password must not survive the owner's confirmation), or discard it
       */
      pending: { company: string; createdAt: Date; expiresAt: Date; confirmLink: string; discardLink: string } | null;
    }
  | { kind: "password_reset"; link: string; minutes: number }
  | { kind: "password_changed"; how: "reset" | "changed"; at: Date; address: string }
  | { kind: "new_sign_in"; at: Date; address: string; userAgent: string | null; plane: "admin" | "dashboard" }
  | {
      kind: "two_factor_changed";
      change: "enabled" | "disabled" | "reset" | "recovery_codes";
      at: Date;
      by: string;
      plane: "admin" | "dashboard";
    }
  | { kind: "deposit_receipt"; amountCents: number; currency: string; balanceCents: number; reference: string; at: Date }
  | { kind: "deposit_refunded"; amountCents: number; currency: string; balanceCents: number; reference: string }
  | { kind: "low_balance"; balanceCents: number; lastsFor: string | null; empty: boolean };

export function renderAccountMail(site: Site, d: MailData): RenderedMail {
  const base = { product: site.product, publicUrl: site.publicUrl };
  switch (d.kind) {
    case "verify_email":
      return renderMail({
        ...base,
        subject: "Confirm your email address",
        heading: "Confirm your email address",
        paragraphs: [
          `Someone (we hope you) created a ${site.product} account for “${d.company}” with this address.`,
          "Confirm the address to finish, with the password you chose when you signed up: until then the account cannot sign in or spend.",
        ],
        action: { label: "Confirm my email address", url: d.link },
        note: `The link works once and expires in ${d.expiresHours} hours; after that the unconfirmed account is removed. If you did not sign up, ignore this mail, or remove the account from the link's page.`,
        footer: "You received this because this address was entered on our sign-up page.",
      });
    case "signup_exists":
      return renderMail({
        ...base,
        subject: "Someone tried to sign up with your address",
        heading: "Someone tried to sign up with your address",
        paragraphs: d.pending
          ? [
              `A new sign-up was just attempted with this address, which already has an account for “${d.pending.company}” created ${when(d.pending.createdAt)} and not yet confirmed.`,
              "If that account is yours, confirm it with the button below by choosing its password (the one given when it was created is not kept). If you did not create it, discard it (the link below), then sign up again.",
              `Discard the unconfirmed account: ${d.pending.discardLink}`,
            ]
          : [
              "A new sign-up was just attempted with this address. You already have an account, so nothing was created and nothing changed.",
              `If it was you, sign in: ${url(site, "/login")}. Forgot your password? Reset it: ${url(site, "/password-reset")}.`,
              "If it was not you, you need not do anything.",
            ],
        ...(d.pending ? { action: { label: "Confirm my account and choose its password", url: d.pending.confirmLink } } : {}),
        ...(d.pending ? { note: `Both links work once. Unconfirmed, the account is removed at ${when(d.pending.expiresAt)}.` } : {}),
        footer: "You received this because this address was entered on our sign-up page.",
      });
    case "password_reset":
      return renderMail({
        ...base,
        subject: "Reset your password",
        heading: "Reset your password",
        paragraphs: [
          "We received a request to reset the password of the account with this address.",
          "Choosing a new password signs you out of every browser; your API keys keep working.",
        ],
        action: { label: "Choose a new password", url: d.link },
        note: `The link works once and expires in ${d.minutes} minutes. If you did not ask for it, ignore this mail: your password stays as it is.`,
        footer: "You received this because a password reset was requested for this address.",
      });
    case "password_changed":
      return renderMail({
        ...base,
        subject: d.how === "reset" ? "Your password was reset" : "Your password was changed",
        heading: d.how === "reset" ? "Your password was reset" : "Your password was changed",
        paragraphs: [
          `The password of your account was ${d.how === "reset" ? "reset through an emailed link" : "changed"} at ${when(d.at)} from ${d.address}.`,
          "Every browser signed in to your account was signed out. API keys keep working: revoke any you do not recognise under API keys.",
          `If this was not you, reset your password now (${url(site, "/password-reset")}) and tell your administrator.`,
        ],
        footer: "You received this because the password of your account changed.",
      });
    case "new_sign_in":
      return renderMail({
        ...base,
        subject: "New sign-in to your account",
        heading: "New sign-in to your account",
        paragraphs: [
          `Your account was signed in to at ${when(d.at)} from ${d.address}${d.userAgent ? ` (${d.userAgent.slice(0, 160)})` : ""}, a place it had not been signed in from before.`,
          "If this was you, there is nothing to do. If not, change your password and review your sign-in history.",
        ],
        action: { label: "Review sign-ins", url: url(site, `/${d.plane}/account#sign-ins`) },
        footer: "You received this because your account was signed in to from a new place.",
      });
    case "two_factor_changed": {
      const what = {
        enabled: "Two-factor sign-in was turned on for your account",
        disabled: "Two-factor sign-in was turned off for your account",
        reset: "Two-factor sign-in was reset for your account",
        recovery_codes: "New recovery codes were made for your account",
      }[d.change];
      return renderMail({
        ...base,
        subject: what,
        heading: what,
        paragraphs: [
          `${what} at ${when(d.at)} by ${d.by}.`,
          d.change === "recovery_codes"
            ? "Your earlier recovery codes no longer work."
            : d.change === "enabled"
              ? "From now on, signing in asks for a code from your authenticator app (or one of your recovery codes)."
              : "Signing in now asks only for your password. You can turn two-factor sign-in on again under Account.",
          "If this was not you, change your password at once and tell your administrator.",
        ],
        action: { label: "Open account security", url: url(site, `/${d.plane}/account`) },
        footer: "You received this because your account's sign-in security changed.",
      });
    }
    case "deposit_receipt":
      return renderMail({
        ...base,
        subject: `Receipt: ${formatCents(d.amountCents, d.currency.toUpperCase())} added to your balance`,
        heading: "Payment received",
        paragraphs: [
          `${formatCents(d.amountCents, d.currency.toUpperCase())} was added to your prepaid balance at ${when(d.at)} (card payment through Stripe, reference ${d.reference}).`,
          `Your balance is now ${formatCents(d.balanceCents, d.currency.toUpperCase())}. Work waiting for funds starts again on its own.`,
        ],
        action: { label: "Open billing", url: url(site, "/dashboard/billing") },
        footer: "You received this as an admin or the billing contact of the organisation.",
      });
    case "deposit_refunded":
      return renderMail({
        ...base,
        subject: `${formatCents(d.amountCents, d.currency.toUpperCase())} refunded to your card`,
        heading: "Card payment refunded",
        paragraphs: [
          `${formatCents(d.amountCents, d.currency.toUpperCase())} of the card payment ${d.reference} was refunded, and taken from your prepaid balance.`,
          `Your balance is now ${formatCents(d.balanceCents, d.currency.toUpperCase())}.`,
        ],
        action: { label: "Open billing", url: url(site, "/dashboard/billing") },
        footer: "You received this as an admin or the billing contact of the organisation.",
      });
    case "low_balance":
      return renderMail({
        ...base,
        subject: d.empty ? "Your prepaid balance is used up" : "Your prepaid balance is running low",
        heading: d.empty ? "Your prepaid balance is used up" : "Your prepaid balance is running low",
        paragraphs: d.empty
          ? [
              `Your balance is ${formatCents(d.balanceCents)}. New work waits until funds arrive, and running work stops after the grace period.`,
              "Add funds to keep it running.",
            ]
          : [
              `Your balance is ${formatCents(d.balanceCents)}${d.lastsFor ? `, about ${d.lastsFor} at the current spend` : ""}.`,
              "At zero new work waits and running work stops after the grace period. Add funds to keep it running.",
            ],
        action: { label: "Add funds", url: url(site, "/dashboard/billing#add-funds") },
        footer: "You received this as an admin or the billing contact of the organisation.",
      });
  }
}
