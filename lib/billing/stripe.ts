import "server-only";
import Stripe from "stripe";
import { env } from "@/lib/env";

export interface StripeConfig {
  secretKey?: string;
  webhookSecret?: string;
  /** another host for Stripe's API (a proxy, or a local stand-in in tests) */
  apiBase?: string;
}

export function stripeConfigFromEnv(): StripeConfig {
  const e = env();
  return { secretKey: e.STRIPE_SECRET_KEY, webhookSecret: e.STRIPE_WEBHOOK_SECRET, apiBase: e.STRIPE_API_BASE };
}

export function stripeClient(cfg: StripeConfig = stripeConfigFromEnv()): Stripe | null {
  if (!cfg.secretKey) return null;
  const base = cfg.apiBase ? new URL(cfg.apiBase) : null;
  return new Stripe(cfg.secretKey, {
    maxNetworkRetries: 2,
    timeout: 10_000,
    ...(base
      ? {
          host: base.hostname,
          port: Number(base.port) || (base.protocol === "https:" ? 443 : 80),
          protocol: base.protocol === "https:" ? "https" : "http",
        }
      : {}),
  });
}

/** A Checkout Session that pays one invoice; the invoice id travels in its metadata to the webhook. */
export async function createInvoiceCheckout(
  client: Stripe,
  invoice: { id: string; label: string; amountCents: number; customerEmail: string | null },
  urls: { success: string; cancel: string },
  /** the session a new one replaces (it expired or closed): a key of its own, the same for every caller replacing it */
  replacing?: string,
): Promise<{ id: string; url: string }> {
  const session = await client.checkout.sessions.create(
    {
      mode: "payment",
      client_reference_id: invoice.id,
      metadata: { invoice_id: invoice.id },
      payment_intent_data: { metadata: { invoice_id: invoice.id } },
      line_items: [
        {
          quantity: 1,
          price_data: { currency: "usd", unit_amount: invoice.amountCents, product_data: { name: `GPUForge ${invoice.label}` } },
        },
      ],
      ...(invoice.customerEmail ? { customer_email: invoice.customerEmail } : {}),
      success_url: urls.success,
      cancel_url: urls.cancel,
    },
    { idempotencyKey: replacing ? `invoice-${invoice.id}-after-${replacing}` : `invoice-${invoice.id}` },
  );
  if (!session.url) throw new Error("Stripe returned a Checkout Session without a URL");
  return { id: session.id, url: session.url };
}

/**
 * Closes an invoice's Checkout Session once the invoice is settled another way (paid from the
 * balance or by bank, or voided), so nobody can pay it a second time by card. A session Stripe
 * already closed (paid, expired) answers with an error, which is fine: there is nothing to close.
 */
export async function expireCheckoutSession(client: Stripe, sessionId: string): Promise<"expired" | "not_open"> {
  try {
    await client.checkout.sessions.expire(sessionId);
    return "expired";
  } catch (e) {
    if ((e as { type?: string }).type === "StripeInvalidRequestError") return "not_open";
    throw e;
  }
}

/** Whether a Checkout Session still takes a payment, and its address. */
export async function checkoutSessionState(client: Stripe, sessionId: string): Promise<{ open: boolean; url: string | null }> {
  const s = await client.checkout.sessions.retrieve(sessionId);
  return { open: s.status === "open" && Boolean(s.url), url: s.url ?? null };
}

/** Verifies a webhook's signature on the raw body; throws Stripe's error when it does not match. */
export function verifyStripeEvent(rawBody: string, signature: string, webhookSecret: string): Stripe.Event {
  return Stripe.webhooks.constructEvent(rawBody, signature, webhookSecret);
}

/**
 * A Checkout Session that adds funds to a tenant's prepaid balance. Our deposit's id travels in
 * the session's and its PaymentIntent's metadata; the webhook credits the deposit recorded under
 * the session, never a tenant named in metadata. Stripe refuses a second create with the same
 * idempotency key, so a retried request cannot open two sessions for one deposit.
 */
export async function createDepositCheckout(
  client: Stripe,
  deposit: {
    id: string;
    tenantId: string;
    amountCents: number;
    currency: string;
    label: string;
    customerEmail: string | null;
    product: string;
  },
  urls: { success: string; cancel: string },
): Promise<{ id: string; url: string }> {
  const metadata = { deposit_id: deposit.id, tenant_id: deposit.tenantId };
  const session = await client.checkout.sessions.create(
    {
      mode: "payment",
      client_reference_id: deposit.id,
      metadata,
      payment_intent_data: { metadata, description: `${deposit.product} prepaid credit ${deposit.label}` },
      line_items: [
        {
          quantity: 1,
          price_data: {
            currency: deposit.currency,
            unit_amount: deposit.amountCents,
            product_data: { name: `${deposit.product} prepaid credit` },
          },
        },
      ],
      ...(deposit.customerEmail ? { customer_email: deposit.customerEmail } : {}),
      success_url: urls.success,
      cancel_url: urls.cancel,
    },
    { idempotencyKey: `deposit-${deposit.id}` },
  );
  if (!session.url) throw new Error("Stripe returned a Checkout Session without a URL");
  return { id: session.id, url: session.url };
}
