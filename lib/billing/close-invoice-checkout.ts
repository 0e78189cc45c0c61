import "server-only";
import { db } from "@/lib/db/client";
import { logger } from "@/lib/logger";
import { expireCheckoutSession, stripeClient, stripeConfigFromEnv, type StripeConfig } from "./stripe";

/**
 * A settled invoice's Stripe Checkout Session is expired, so it cannot take a card payment too. If
 * Stripe cannot be reached the session stays open, and a payment through it is caught by the
 * webhook, which raises an operator alert instead of keeping the money silently.
 */
export async function closeInvoiceCheckout(invoiceId: string, cfg: StripeConfig = stripeConfigFromEnv()) {
  const inv = await db().invoice.findUnique({ where: { id: invoiceId }, select: { stripeSessionId: true } });
  const client = stripeClient(cfg);
  if (!inv?.stripeSessionId || !client) return;
  try {
    await expireCheckoutSession(client, inv.stripeSessionId);
  } catch (e) {
    logger.warn("could not expire the Stripe Checkout session of a settled invoice; a card payment through it will raise an alert", {
      invoice: invoiceId,
      error: String(e),
    });
  }
}
