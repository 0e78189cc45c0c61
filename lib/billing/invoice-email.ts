import "server-only";
import { channelConfig, queueNotifications, type ChannelConfig } from "@/lib/alerts/notification-outbox";
import { db } from "@/lib/db/client";
import { formatCents, invoiceLabel } from "./money";
import { localPaymentUrl } from "./invoice-json";

// An invoice's payment link, emailed to the tenant's billing address through the notification
// outbox (delivered, retried and recorded like an alert). The invoice pages say "sent" only when
// this email was delivered (issue 32: the page claimed "Payment link sent" while nothing sent it).

export type InvoiceEmailOutcome = "queued" | "no_billing_email" | "no_email_channel" | "not_pending";

/** Queues the invoice's email once (a second call for the same invoice adds nothing). */
export async function queueInvoiceEmail(invoiceId: string, config?: ChannelConfig): Promise<InvoiceEmailOutcome> {
  const inv = await db().invoice.findUniqueOrThrow({
    where: { id: invoiceId },
    select: {
      id: true,
      number: true,
      status: true,
      amountCents: true,
      periodStart: true,
      periodEnd: true,
      stripeUrl: true,
      tenantId: true,
    },
  });
  if (inv.status !== "pending") return "not_pending";
  const tenant = await db().tenant.findUniqueOrThrow({ where: { id: inv.tenantId }, select: { name: true, billingEmail: true } });
  if (!tenant.billingEmail) return "no_billing_email";
  const cfg = config ?? (await channelConfig());
  if (!cfg.smtpUrl) return "no_email_channel";
  const label = invoiceLabel(inv.number);
  const link = inv.stripeUrl ?? localPaymentUrl(inv.id);
  const day = (d: Date) => d.toISOString().slice(0, 10);
  await queueNotifications([
    {
      invoiceId: inv.id,
      kind: "invoice",
      channel: "email",
      target: tenant.billingEmail,
      subject: `${label}: ${formatCents(inv.amountCents)} for GPU usage, ${day(inv.periodStart)} to ${day(inv.periodEnd)}`,
      body: [
        `Hello ${tenant.name},`,
        "",
        `Your invoice ${label} for GPU usage from ${day(inv.periodStart)} to ${day(inv.periodEnd)} (UTC) is ${formatCents(inv.amountCents)}.`,
        "",
        `See it and pay it here: ${link}`,
        "",
        "You can pay from your balance, by card where offered, or by bank transfer quoting the invoice number.",
      ].join("\n"),
    },
  ]);
  return "queued";
}

/** Whether the invoice's payment link reached the tenant: the email's delivery as the outbox recorded it, or why there is none. */
export async function invoiceEmailDelivery(invoiceId: string) {
  const n = await db().notification.findFirst({
    where: { invoiceId, channel: "email" },
    select: { status: true, target: true, sentAt: true, lastError: true, attempts: true },
  });
  if (n)
    return {
      state: n.status as "pending" | "sent" | "failed",
      target: n.target,
      sentAt: n.sentAt?.toISOString() ?? null,
      error: n.lastError,
    };
  const inv = await db().invoice.findUniqueOrThrow({ where: { id: invoiceId }, select: { tenantId: true } });
  const tenant = await db().tenant.findUniqueOrThrow({ where: { id: inv.tenantId }, select: { billingEmail: true } });
  const cfg = await channelConfig();
  return {
    state: (tenant.billingEmail ? (cfg.smtpUrl ? "not_queued" : "no_email_channel") : "no_billing_email") as
      "not_queued" | "no_email_channel" | "no_billing_email",
    target: tenant.billingEmail,
    sentAt: null,
    error: null,
  };
}
