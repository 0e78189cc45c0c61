import "server-only";
import nodemailer from "nodemailer";

// The two transports notifications leave through: SMTP (nodemailer) and a Slack-compatible JSON
// webhook. The outbox delivers alerts with them; the settings page's "send test" uses them too.

export async function sendEmail(
  smtpUrl: string,
  mail: { from: string; to: string[]; subject: string; text: string; html?: string },
): Promise<void> {
  const transport = nodemailer.createTransport(smtpUrl, { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 });
  try {
    await transport.sendMail(mail);
  } finally {
    transport.close();
  }
}

/** Posts JSON to a webhook; `text` is what Slack-compatible receivers show, the rest is for machines. */
export async function postWebhook(url: string, body: { text: string; gpuforge: Record<string, unknown> }): Promise<void> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`webhook answered HTTP ${res.status}`);
}
