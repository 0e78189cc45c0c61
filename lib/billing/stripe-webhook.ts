import "server-only";
import type Stripe from "stripe";
import { recordAudit } from "@/lib/audit/record-audit";
import { systemActorFor } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { run, runCount } from "@/lib/db/statement";
import { notFound, validationFailed } from "@/lib/errors";
import { enqueueNotifications } from "@/lib/alerts/notification-outbox";
import type { Tx } from "@/lib/db/client";
import { enforcePrepaidBalances } from "./meter";
import { invoiceLabel } from "./money";
import { FIRE_UNEXPECTED_PAYMENT, LOCK_INVOICE_FOR_PAYMENT, RECORD_STRIPE_EVENT, SET_STRIPE_EVENT_OUTCOME } from "./statements";
import { stripeConfigFromEnv, verifyStripeEvent, type StripeConfig } from "./stripe";
import { wakeMailDeliverer } from "@/lib/mail/queue-account-mail";
import {
  depositAsyncFailed,
  depositChargeRefunded,
  depositPaymentFailed,
  depositSessionCompleted,
  depositSessionExpired,
  isDepositSession,
  type DepositEffect,
  type DepositOutcome,
} from "./stripe-deposit-events";

/** Events that pay invoices or deposits; every type not handled below is acknowledged and ignored. */
const HANDLED_STRIPE_EVENTS = ["checkout.session.completed", "checkout.session.async_payment_succeeded"] as const;

export type WebhookOutcome =
  "invoice_paid" | "already_paid" | "invoice_void" | "not_paid_yet" | "unknown_invoice" | "ignored" | "duplicate" | DepositOutcome;

const actor = systemActorFor("stripe webhook");

/**
 * Applies a Stripe webhook: the signature is checked on the raw body with STRIPE_WEBHOOK_SECRET,
 * each event id is stored once (a redelivery changes nothing), and a paid Checkout Session marks
 * its invoice paid or credits the prepaid deposit it was for.
 */
export async function handleStripeWebhook(
  rawBody: string,
  signature: string | null,
  cfg: StripeConfig = stripeConfigFromEnv(),
): Promise<{ id: string; outcome: WebhookOutcome }> {
  if (!cfg.webhookSecret) throw notFound("Stripe webhooks are not configured");
  if (!signature) throw validationFailed([{ path: "stripe-signature", message: "Missing Stripe-Signature header" }]);
  let event: Stripe.Event;
  try {
    event = verifyStripeEvent(rawBody, signature, cfg.webhookSecret);
  } catch (e) {
    throw validationFailed([
      { path: "stripe-signature", message: `Signature verification failed: ${(e as Error).message.split("\n")[0]}` },
    ]);
  }
  let alertId: string | null = null;
  let balanceChanged = false;
  const outcome = await db().$transaction(async (tx) => {
    const first = await runCount(tx, RECORD_STRIPE_EVENT, [event.id, event.type]);
    if (first === 0) return "duplicate" as const;
    let result: WebhookOutcome = "ignored";
    const deposit = (effect: DepositEffect) => {
      if (effect.alertId) alertId = effect.alertId;
      if (effect.balanceChanged) balanceChanged = true;
      return effect.outcome;
    };
    if ((HANDLED_STRIPE_EVENTS as readonly string[]).includes(event.type)) {
      const session = event.data.object as Stripe.Checkout.Session;
      if (!session.metadata?.invoice_id && isDepositSession(session)) result = deposit(await depositSessionCompleted(tx, event, session));
      else result = await payInvoiceFromSession(tx, event, session, (id) => (alertId = id));
    } else if (event.type === "checkout.session.expired") {
      const session = event.data.object as Stripe.Checkout.Session;
      if (isDepositSession(session)) result = deposit(await depositSessionExpired(tx, session));
    } else if (event.type === "checkout.session.async_payment_failed") {
      const session = event.data.object as Stripe.Checkout.Session;
      if (isDepositSession(session)) result = deposit(await depositAsyncFailed(tx, session));
    } else if (event.type === "payment_intent.payment_failed") {
      result = deposit(await depositPaymentFailed(tx, event.data.object as Stripe.PaymentIntent));
    } else if (event.type === "charge.refunded") {
      result = deposit(await depositChargeRefunded(tx, event, event.data.object as Stripe.Charge));
    }
    await run(tx, SET_STRIPE_EVENT_OUTCOME, [result, event.id]);
    return result;
  });
  if (balanceChanged) await enforcePrepaidBalances();
  if (outcome !== "duplicate") await wakeMailDeliverer();
  if (alertId) await enqueueNotifications([alertId], "firing");
  return { id: event.id, outcome };
}

/** A paid Checkout Session for an invoice marks it paid, once; money for one settled otherwise alerts operators. */
async function payInvoiceFromSession(
  tx: Tx,
  event: Stripe.Event,
  session: Stripe.Checkout.Session,
  raised: (alertId: string | null) => void,
): Promise<WebhookOutcome> {
  const invoiceId = session.metadata?.invoice_id;
  if (session.payment_status !== "paid") return "not_paid_yet";
  if (!invoiceId) return "ignored";
  const [inv] = await run(tx, LOCK_INVOICE_FOR_PAYMENT, [invoiceId]);
  const reference = paymentReference(session);
  if (!inv) return "unknown_invoice";
  if (inv.status === "paid") {
    // paid another way (balance, bank, another session): this money is extra, and a human must act
    if (!(inv.payment_method === "stripe" && inv.payment_reference === reference))
      raised(await raiseUnexpectedPayment(tx, invoiceId, inv, session, reference));
    return "already_paid";
  }
  // money for a voided invoice is not applied: its usage may be invoiced again; an operator refunds it
  if (inv.status === "void") {
    raised(await raiseUnexpectedPayment(tx, invoiceId, inv, session, reference));
    return "invoice_void";
  }
  await tx.invoice.update({
    where: { id: invoiceId },
    data: { status: "paid", paidAt: new Date(), paymentMethod: "stripe", paymentReference: reference },
  });
  await recordAudit(tx, actor, {
    action: "billing.invoice_paid",
    targetType: "invoice",
    targetId: invoiceId,
    tenantId: inv.tenant_id,
    details: { method: "stripe", stripe_event: event.id, session: session.id },
  });
  return "invoice_paid";
}

/** A critical operator alert: a card payment arrived for an invoice that is already paid or void. */
async function raiseUnexpectedPayment(
  tx: Tx,
  invoiceId: string,
  inv: { status: string; number: number },
  session: Stripe.Checkout.Session,
  reference: string,
): Promise<string | null> {
  const amount = session.amount_total ?? 0;
  const label = invoiceLabel(inv.number);
  const [row] = await run(tx, FIRE_UNEXPECTED_PAYMENT, [
    `unexpected_payment:${session.id}`,
    invoiceId,
    label,
    `A card payment of ${(amount / 100).toFixed(2)} ${(session.currency ?? "usd").toUpperCase()} arrived through Stripe for ${label}, which is already ${inv.status}. It was not applied: refund it in Stripe, or credit it by hand.`,
    JSON.stringify({
      invoice_id: invoiceId,
      invoice_status: inv.status,
      stripe_session: session.id,
      payment_reference: reference,
      amount_cents: amount,
    }),
  ]);
  return row?.id ?? null;
}

/** What identifies a Checkout payment: its PaymentIntent's id (the session carries the id, or the object when expanded), else the session's. */
function paymentReference(session: Stripe.Checkout.Session): string {
  const intent = session.payment_intent;
  return typeof intent === "string" ? intent : (intent?.id ?? session.id);
}
