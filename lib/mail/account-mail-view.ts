import "server-only";
import { assertOperator, type Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { accountMailBodies } from "./account-mail-bodies";

/**
 * One account mail as operators read it under Alerts → Notifications. Where no email server is
 * configured the console is the mail's only channel, so its real text (links included) is shown
 * to operators, who could reset any account anyway; mail that was emailed shows what is stored,
 * its links withheld.
 */
export async function accountMailForOperator(p: Principal, id: string) {
  assertOperator(p);
  const n = await db().notification.findFirst({ where: { id, kind: "account" } });
  if (!n) return null;
  let text = n.body;
  if (n.channel === "console" && n.secretCiphertext) {
    try {
      text = accountMailBodies({ id: n.id, body: n.body, body_html: n.bodyHtml, secret_ciphertext: n.secretCiphertext }).text;
    } catch {
      text = `${n.body}\n\n(The links in this mail can no longer be opened: the installation's NEXTAUTH_SECRET changed since.)`;
    }
  }
  return {
    id: n.id,
    subject: n.subject,
    to: n.target,
    kind: n.mailKind,
    channel: n.channel,
    status: n.status,
    createdAt: n.createdAt,
    sentAt: n.sentAt,
    text,
  };
}
