import "server-only";
import { db } from "@/lib/db/client";
import { logger } from "@/lib/logger";
import { localPaymentUrl } from "./invoice-json";
import { invoiceLabel } from "./money";
import { createInvoiceCheckout, stripeClient, stripeConfigFromEnv, type StripeConfig } from "./stripe";

/** Gives a pending invoice its Stripe Checkout link when Stripe is configured. A failure leaves the local payment page in place. */
export async function attachStripeCheckout(invoiceId: string, cfg: StripeConfig = stripeConfigFromEnv()) {
  const client = stripeClient(cfg);
  if (!client) return;
  const inv = await db().invoice.findUniqueOrThrow({
    where: { id: invoiceId },
    select: { id: true, number: true, amountCents: true, status: true, stripeSessionId: true, tenantId: true },
  });
  if (inv.status !== "pending" || inv.stripeSessionId) return;
  const tenant = await db().tenant.findUniqueOrThrow({ where: { id: inv.tenantId }, select: { billingEmail: true } });
  try {
    const s = await createInvoiceCheckout(
      client,
      { id: inv.id, label: invoiceLabel(inv.number), amountCents: Number(inv.amountCents), customerEmail: tenant.billingEmail },
      {
        success: `${localPaymentUrl(inv.id)}?paid=stripe`,
        cancel: localPaymentUrl(inv.id),
      },
    );
    await db().invoice.update({ where: { id: inv.id }, data: { stripeSessionId: s.id, stripeUrl: s.url } });
  } catch (e) {
    logger.warn("stripe checkout creation failed; the local payment page stays the payment link", { invoice: inv.id, error: String(e) });
  }
}
