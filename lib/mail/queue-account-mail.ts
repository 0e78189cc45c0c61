import "server-only";
import { randomUUID } from "node:crypto";
import { channelConfig } from "@/lib/alerts/notification-outbox";
import { sealAccountSecret } from "@/lib/auth/account-secrets";
import { emitEvent } from "@/lib/background/emit";
import { db, type Tx } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { logger } from "@/lib/logger";
import { productName, publicUrl } from "@/lib/platform/public-url";
import { renderAccountMail, type MailData } from "./templates";
import { RECENT_ACCOUNT_MAIL } from "./statements";

// Account mail (sign-up, password reset, sign-in notices, receipts, low balance) goes through the
// notification outbox like alerts: an email row when an email server is configured (delivered
// with retries by the outbox's deliverer), else a console row that operators read under Alerts →
// Notifications. Mail with a token link is stored with the link withheld; the real bodies are
// sealed until delivered (lib/mail/account-mail-bodies.ts).

export interface AccountMail {
  to: string;
  data: MailData;
  userId?: string | null;
  tenantId?: string | null;
  /** once-only mail (a receipt for one deposit): a second with the same key is not queued */
  dedupeKey?: string;
  /** links in the mail that carry a token: withheld from what is stored in the clear */
  secretLinks?: string[];
}

/** Mail an anonymous visitor can cause to be sent (sign-up, reset): at most this many to one address an hour. */
const VISITOR_MAIL_PER_HOUR = 5;
const VISITOR_KINDS = ["verify_email", "signup_exists", "password_reset"];
const WITHHELD = "[link withheld here: it was sent only to the recipient]";

/**
 * Queues account mail in the caller's transaction when given one (it commits with the change it
 * announces). Returns how many were queued: a mail a visitor caused is skipped once its address
 * got VISITOR_MAIL_PER_HOUR of them this hour (so nobody can flood an inbox through our forms),
 * and a dedupe key already used skips it too.
 */
export async function queueAccountMail(mails: AccountMail[], tx?: Tx): Promise<number> {
  if (mails.length === 0) return 0;
  const client = tx ?? db();
  const cfg = await channelConfig();
  const channel = cfg.smtpUrl ? "email" : "console";
  const site = { product: productName(), publicUrl: publicUrl() };
  let queued = 0;
  for (const m of mails) {
    const to = m.to.trim().toLowerCase();
    if (VISITOR_KINDS.includes(m.data.kind)) {
      const [recent] = await run(client, RECENT_ACCOUNT_MAIL, [to, VISITOR_KINDS]);
      if ((recent?.n ?? 0) >= VISITOR_MAIL_PER_HOUR) {
        logger.warn("account mail to an address over its hourly allowance not queued", { kind: m.data.kind });
        continue;
      }
    }
    const id = randomUUID();
    const real = renderAccountMail(site, m.data);
    const secrets = m.secretLinks ?? [];
    const hide = (s: string, escaped: boolean) =>
      secrets.reduce((acc, link) => acc.split(escaped ? link.replace(/&/g, "&amp;") : link).join(WITHHELD), s);
    const stored = secrets.length
      ? { subject: hide(real.subject, false), text: hide(real.text, false), html: hide(real.html, true) }
      : real;
    const created = await client.notification.createMany({
      data: [
        {
          id,
          kind: "account",
          mailKind: m.data.kind,
          channel,
          target: to,
          subject: stored.subject,
          body: stored.text,
          bodyHtml: stored.html,
          secretCiphertext: secrets.length ? sealAccountSecret("mail", id, JSON.stringify({ text: real.text, html: real.html })) : null,
          userId: m.userId ?? null,
          tenantId: m.tenantId ?? null,
          dedupeKey: m.dedupeKey ?? null,
          status: channel === "console" ? "sent" : "pending",
          sentAt: channel === "console" ? new Date() : null,
        },
      ],
      skipDuplicates: true,
    });
    queued += created.count;
  }
  // inside a transaction the caller wakes the deliverer once it committed (wakeMailDeliverer), or
  // the deliverer would look before the rows exist; the outbox's sweep is the safety net either way
  if (queued > 0 && channel === "email" && !tx) await wakeMailDeliverer();
  return queued;
}

/** Wakes the outbox's deliverer: call after the transaction that queued account mail committed. */
export async function wakeMailDeliverer(): Promise<void> {
  await emitEvent("alerts/notifications.queued", { count: 1 });
}
