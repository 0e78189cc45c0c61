import "server-only";
import type Stripe from "stripe";
import { recordAudit } from "@/lib/audit/record-audit";
import { systemActorFor } from "@/lib/auth/principal";
import type { Tx } from "@/lib/db/client";
import { run, type RowOf } from "@/lib/db/statement";
import { conflict } from "@/lib/errors";
import { queueAccountMail } from "@/lib/mail/queue-account-mail";
import { depositLabel, depositTransition, newlyRefundedCents } from "./card-deposit-lifecycle";
import { FIRE_PAYMENT_ALERT, LOCK_DEPOSIT_FOR_INTENT, LOCK_DEPOSIT_FOR_SESSION } from "./card-deposit-statements";
import { balanceOf } from "./ledger";
import { oneOf } from "@/lib/vocabulary";
import { CARD_DEPOSIT_STATUSES } from "./card-deposit-lifecycle";

// What Stripe's events about card deposits change, one function per event type, each inside the
// webhook's transaction (lib/billing/stripe-webhook.ts: the event id is recorded in the same one,
// so a redelivery changes nothing). A deposit is found by the session (or PaymentIntent) recorded
// for it; the tenant credited is the one recorded, and an event whose metadata names another
// tenant, or whose amount or currency is not the recorded one, changes nothing and alerts
// operators instead: money we cannot match to what a tenant asked for is for a person to settle.

const actor = systemActorFor("stripe webhook");

export type DepositOutcome =
  | "deposit_credited"
  | "deposit_processing"
  | "deposit_expired"
  | "deposit_failed"
  | "deposit_attempt_failed"
  | "deposit_refunded"
  | "deposit_unchanged"
  | "deposit_mismatch"
  | "unknown_deposit";

export interface DepositEffect {
  outcome: DepositOutcome;
  /** the balance moved: prepaid enforcement should look again */
  balanceChanged?: boolean;
  /** an operator alert to announce */
  alertId?: string | null;
}

type Locked = RowOf<typeof LOCK_DEPOSIT_FOR_SESSION>;

/** Whether a Checkout Session is about a deposit (ours or claiming to be). */
export function isDepositSession(session: Stripe.Checkout.Session): boolean {
  return Boolean(session.metadata?.deposit_id || session.metadata?.deposit_tenant_id);
}

async function lockForSession(tx: Tx, session: Stripe.Checkout.Session): Promise<Locked | null> {
  const [row] = await run(tx, LOCK_DEPOSIT_FOR_SESSION, [session.id, session.metadata?.deposit_id ?? ""]);
  return row ?? null;
}

/** The session does not belong to the deposit it names: another tenant's, or another amount or currency. */
function mismatch(d: Locked, session: Stripe.Checkout.Session): string | null {
  const named = session.metadata?.tenant_id ?? session.metadata?.deposit_tenant_id;
  if (named && named !== d.tenant_id) return "names another tenant than the deposit's";
  if (d.stripe_session_id && d.stripe_session_id !== session.id) return "is not the session recorded for the deposit";
  if (session.amount_total !== null && session.amount_total !== undefined && session.amount_total !== Number(d.amount_cents))
    return `is for ${session.amount_total} cents, the deposit for ${d.amount_cents}`;
  if (session.currency && session.currency.toLowerCase() !== d.currency) return `is in ${session.currency}, the deposit in ${d.currency}`;
  return null;
}

async function alert(tx: Tx, key: string, subject: string, message: string, details: Record<string, unknown>): Promise<string | null> {
  const [row] = await run(tx, FIRE_PAYMENT_ALERT, [key, subject, `card payment ${subject.slice(0, 40)}`, message, JSON.stringify(details)]);
  return row?.id ?? null;
}

/** checkout.session.completed and checkout.session.async_payment_succeeded for a deposit session. */
export async function depositSessionCompleted(tx: Tx, event: Stripe.Event, session: Stripe.Checkout.Session): Promise<DepositEffect> {
  const d = await lockForSession(tx, session);
  if (!d) {
    if (session.payment_status !== "paid") return { outcome: "unknown_deposit" };
    const alertId = await alert(
      tx,
      `unknown_deposit:${session.id}`,
      session.id,
      `A card payment of ${((session.amount_total ?? 0) / 100).toFixed(2)} ${(session.currency ?? "").toUpperCase()} arrived through Stripe for a deposit this installation did not open (${session.id}). Nothing was credited: refund it in Stripe, or credit the right tenant by hand.`,
      { stripe_session: session.id, metadata: session.metadata ?? {}, amount_cents: session.amount_total, stripe_event: event.id },
    );
    return { outcome: "unknown_deposit", alertId };
  }
  const wrong = mismatch(d, session);
  if (wrong) {
    const alertId = await alert(
      tx,
      `deposit_mismatch:${session.id}`,
      d.id,
      `A Stripe payment event for deposit ${depositLabel(d.id)} ${wrong}. Nothing was credited; check the payment in Stripe.`,
      {
        deposit_id: d.id,
        stripe_session: session.id,
        metadata: session.metadata ?? {},
        amount_cents: session.amount_total,
        stripe_event: event.id,
      },
    );
    return { outcome: "deposit_mismatch", alertId };
  }
  const from = oneOf(CARD_DEPOSIT_STATUSES, d.status, "card_deposits.status");
  const intent = typeof session.payment_intent === "string" ? session.payment_intent : (session.payment_intent?.id ?? null);
  if (session.payment_status !== "paid") {
    if (session.payment_status === "unpaid" && depositTransition(from, { kind: "payment_pending" }).change) {
      await tx.cardDeposit.update({
        where: { id: d.id },
        data: { status: "processing", stripeSessionId: session.id, stripePaymentIntent: intent },
      });
      return { outcome: "deposit_processing" };
    }
    return { outcome: "deposit_unchanged" };
  }
  if (!depositTransition(from, { kind: "paid" }).change) return { outcome: "deposit_unchanged" };
  await tx.cardDeposit.update({
    where: { id: d.id },
    data: { status: "paid", paidAt: new Date(), closedAt: null, stripeSessionId: session.id, stripePaymentIntent: intent },
  });
  const amount = Number(d.amount_cents);
  // the database's unique index on the deposit's credit is the last word on "once"
  await tx.ledgerEntry.create({
    data: {
      tenantId: d.tenant_id,
      kind: "deposit",
      amountCents: BigInt(amount),
      cardDepositId: d.id,
      stripeEventId: event.id,
      description: `Card deposit ${depositLabel(d.id)} through Stripe Checkout`,
      createdBy: "stripe webhook",
    },
  });
  await recordAudit(tx, actor, {
    action: "billing.deposit",
    targetType: "tenant",
    targetId: d.tenant_id,
    tenantId: d.tenant_id,
    details: { amount_cents: amount, card_deposit: d.id, stripe_event: event.id, session: session.id, was: from },
  });
  await mailTenant(
    tx,
    d.tenant_id,
    async (balance) => ({
      kind: "deposit_receipt",
      amountCents: amount,
      currency: d.currency,
      balanceCents: balance,
      reference: depositLabel(d.id),
      at: new Date(),
    }),
    `deposit_receipt:${d.id}`,
  );
  return { outcome: "deposit_credited", balanceChanged: true };
}

/** checkout.session.expired: an open deposit nobody paid is closed as expired (it stays listed). */
export async function depositSessionExpired(tx: Tx, session: Stripe.Checkout.Session): Promise<DepositEffect> {
  const d = await lockForSession(tx, session);
  if (!d) return { outcome: "unknown_deposit" };
  if (mismatch(d, session)) return { outcome: "deposit_mismatch" };
  if (!depositTransition(oneOf(CARD_DEPOSIT_STATUSES, d.status, "card_deposits.status"), { kind: "expired" }).change)
    return { outcome: "deposit_unchanged" };
  await tx.cardDeposit.update({ where: { id: d.id }, data: { status: "expired", closedAt: new Date(), stripeSessionId: session.id } });
  return { outcome: "deposit_expired" };
}

/** checkout.session.async_payment_failed: a delayed payment (a bank debit) did not go through. */
export async function depositAsyncFailed(tx: Tx, session: Stripe.Checkout.Session): Promise<DepositEffect> {
  const d = await lockForSession(tx, session);
  if (!d) return { outcome: "unknown_deposit" };
  if (mismatch(d, session)) return { outcome: "deposit_mismatch" };
  if (!depositTransition(oneOf(CARD_DEPOSIT_STATUSES, d.status, "card_deposits.status"), { kind: "async_failed" }).change)
    return { outcome: "deposit_unchanged" };
  await tx.cardDeposit.update({
    where: { id: d.id },
    data: { status: "failed", closedAt: new Date(), failureMessage: "The payment did not go through (the bank declined or reversed it)" },
  });
  return { outcome: "deposit_failed" };
}

/** payment_intent.payment_failed: a card was declined on the payment page; the page stays open for another try, and the attempt is recorded. */
export async function depositPaymentFailed(tx: Tx, intent: Stripe.PaymentIntent): Promise<DepositEffect> {
  const [d] = await run(tx, LOCK_DEPOSIT_FOR_INTENT, [intent.id, intent.metadata?.deposit_id ?? ""]);
  if (!d) return { outcome: "unknown_deposit" };
  if (intent.metadata?.tenant_id && intent.metadata.tenant_id !== d.tenant_id) return { outcome: "deposit_mismatch" };
  if (d.status === "paid") return { outcome: "deposit_unchanged" };
  const why = intent.last_payment_error?.message?.slice(0, 300) ?? "The card was declined";
  await tx.cardDeposit.update({ where: { id: d.id }, data: { failedAttempts: { increment: 1 }, failureMessage: why } });
  return { outcome: "deposit_attempt_failed" };
}

/**
 * charge.refunded: Stripe reports the charge's refunded total so far; the part not yet taken off
 * the balance is debited, once (a replay or an older event reports no more than is recorded). A
 * refund of a payment we do not know as paid yet (its completion event is still on its way) is
 * refused with 409, so Stripe delivers it again later.
 */
export async function depositChargeRefunded(tx: Tx, event: Stripe.Event, charge: Stripe.Charge): Promise<DepositEffect> {
  const intent = typeof charge.payment_intent === "string" ? charge.payment_intent : (charge.payment_intent?.id ?? "");
  const [d] = await run(tx, LOCK_DEPOSIT_FOR_INTENT, [intent, charge.metadata?.deposit_id ?? ""]);
  if (!d) return { outcome: "unknown_deposit" };
  if (d.status !== "paid") throw conflict("The payment this refund is about has not been confirmed yet; deliver it again later");
  if (d.stripe_payment_intent && intent && d.stripe_payment_intent !== intent) return { outcome: "deposit_mismatch" };
  const amount = Number(d.amount_cents);
  const extra = newlyRefundedCents(amount, Number(d.refunded_cents), charge.amount_refunded);
  if (extra === 0) return { outcome: "deposit_unchanged" };
  await tx.cardDeposit.update({ where: { id: d.id }, data: { refundedCents: { increment: BigInt(extra) } } });
  await tx.ledgerEntry.create({
    data: {
      tenantId: d.tenant_id,
      kind: "card_refund",
      amountCents: BigInt(-extra),
      cardDepositId: d.id,
      stripeEventId: event.id,
      description: `Refund to the card of deposit ${depositLabel(d.id)}, made in Stripe`,
      createdBy: "stripe webhook",
    },
  });
  await recordAudit(tx, actor, {
    action: "billing.card_refund",
    targetType: "card_deposit",
    targetId: d.id,
    tenantId: d.tenant_id,
    details: { amount_cents: extra, refunded_total_cents: Number(d.refunded_cents) + extra, stripe_event: event.id },
  });
  await mailTenant(
    tx,
    d.tenant_id,
    async (balance) => ({
      kind: "deposit_refunded",
      amountCents: extra,
      currency: d.currency,
      balanceCents: balance,
      reference: depositLabel(d.id),
    }),
    `deposit_refunded:${event.id}`,
  );
  return { outcome: "deposit_refunded", balanceChanged: true };
}

/** Mail to the tenant's billing contact and active admins (each address once). */
async function mailTenant(
  tx: Tx,
  tenantId: string,
  data: (balance: number) => Promise<Parameters<typeof queueAccountMail>[0][number]["data"]>,
  dedupeKey: string,
) {
  const tenant = await tx.tenant.findUniqueOrThrow({
    where: { id: tenantId },
    select: { billingEmail: true, users: { where: { role: "tenant_admin", disabledAt: null }, select: { email: true }, take: 20 } },
  });
  const to = [...new Set([tenant.billingEmail, ...tenant.users.map((u) => u.email)].filter((e): e is string => Boolean(e)))];
  const content = await data(await balanceOf(tenantId, tx));
  await queueAccountMail(
    to.map((email) => ({ to: email, tenantId, data: content, dedupeKey: `${dedupeKey}:${email}` })),
    tx,
  );
}
