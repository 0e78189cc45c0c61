import "server-only";
import { openAccountSecret } from "@/lib/auth/account-secrets";
import { env } from "@/lib/env";

/** Who account mail comes from: MAIL_FROM, else the alerts' sender in force. */
export function accountMailFrom(cfg: { emailFrom: string }): string {
  return env().MAIL_FROM ?? cfg.emailFrom;
}

/**
 * The bodies an account mail is delivered with: the sealed real ones when it carries a link (a
 * token), else the stored ones. A sealed body that no longer opens (NEXTAUTH_SECRET changed since)
 * fails the delivery instead of sending the withheld text.
 */
export function accountMailBodies(n: { id: string; body: string; body_html: string | null; secret_ciphertext: string | null }): {
  text: string;
  html?: string;
} {
  if (!n.secret_ciphertext) return { text: n.body, ...(n.body_html ? { html: n.body_html } : {}) };
  const opened = openAccountSecret("mail", n.id, n.secret_ciphertext);
  if (opened === null) throw new Error("this mail's sealed body cannot be opened with the current NEXTAUTH_SECRET");
  const real = JSON.parse(opened) as { text: string; html: string };
  return { text: real.text, html: real.html };
}
