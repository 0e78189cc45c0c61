import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { conflict } from "@/lib/errors";
import { getInvoiceOrThrow } from "./get-invoice";
import { localPaymentUrl } from "./invoice-json";
import { invoiceLabel } from "./money";
import { checkoutSessionState, createInvoiceCheckout, stripeClient, stripeConfigFromEnv, type StripeConfig } from "./stripe";

/**
 * Where a tenant pays an invoice by card: its Stripe Checkout Session while that is open, else a
 * new one (the first, for an invoice issued before Stripe was configured, or after the last one
 * expired — a Checkout link lives a day, an invoice a month). A stored link was the only way to
 * card, and an invoice without one, or with an expired one, dead-ended (issue 32). Two tabs
 * replacing the same session get the same new one (its idempotency key names the old one), and the
 * invoice keeps whichever was stored first.
 */
export async function payInvoiceByCard(
  actor: Actor,
  invoiceId: string,
  cfg: StripeConfig = stripeConfigFromEnv(),
): Promise<{ url: string }> {
  const inv = await getInvoiceOrThrow(actor.principal, invoiceId);
  if (inv.status !== "pending") throw conflict(`${invoiceLabel(inv.number)} is ${inv.status}; there is nothing to pay`);
  const client = stripeClient(cfg);
  if (!client) throw conflict("Card payments are not set up on this installation: pay from your balance or by bank transfer");
  if (inv.stripeSessionId) {
    const s = await checkoutSessionState(client, inv.stripeSessionId);
    if (s.open && s.url) return { url: s.url };
  }
  const tenant = await db().tenant.findUniqueOrThrow({ where: { id: inv.tenantId }, select: { billingEmail: true } });
  const session = await createInvoiceCheckout(
    client,
    { id: inv.id, label: invoiceLabel(inv.number), amountCents: Number(inv.amountCents), customerEmail: tenant.billingEmail },
    { success: `${localPaymentUrl(inv.id)}?paid=stripe`, cancel: localPaymentUrl(inv.id) },
    inv.stripeSessionId ?? undefined,
  );
  // compare-and-set: a concurrent replacement or payment wins
  const { count } = await db().invoice.updateMany({
    where: { id: inv.id, status: "pending", stripeSessionId: inv.stripeSessionId },
    data: { stripeSessionId: session.id, stripeUrl: session.url },
  });
  if (count === 0) {
    const now = await db().invoice.findUniqueOrThrow({ where: { id: inv.id }, select: { status: true, stripeUrl: true } });
    if (now.status !== "pending") throw conflict(`${invoiceLabel(inv.number)} is ${now.status}; there is nothing to pay`);
    return { url: now.stripeUrl ?? session.url };
  }
  return { url: session.url };
}
