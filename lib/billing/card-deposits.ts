import "server-only";
import { randomUUID } from "node:crypto";
import type { z } from "zod";
import type { Actor, Principal } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { conflict, forbidden, notFound, unavailable, validationFailed } from "@/lib/errors";
import { logger } from "@/lib/logger";
import { productName, publicUrl } from "@/lib/platform/public-url";
import { oneOf } from "@/lib/vocabulary";
import { CARD_DEPOSIT_STATUSES, depositLabel } from "./card-deposit-lifecycle";
import { formatCents } from "./money";
import type { cardDepositJsonSchema } from "./card-deposit-schemas";
import { createDepositCheckout, stripeClient, stripeConfigFromEnv, type StripeConfig } from "./stripe";

/** The amounts one card payment may add, from configuration. */
export function cardDepositLimits() {
  const e = env();
  return { minCents: e.CARD_DEPOSIT_MIN_CENTS, maxCents: e.CARD_DEPOSIT_MAX_CENTS, currency: e.CARD_DEPOSIT_CURRENCY };
}

/** Whether card deposits can be taken here (a Stripe key is configured), and if not, why. */
export function cardDepositsAvailable(cfg: StripeConfig = stripeConfigFromEnv()): { available: true } | { available: false; why: string } {
  if (!cfg.secretKey)
    return { available: false, why: "Card payments are not set up on this installation (its operator has not connected Stripe)." };
  if (!cfg.webhookSecret)
    return { available: false, why: "Card payments are not set up completely on this installation (Stripe's webhook is not configured)." };
  return { available: true };
}

/**
 * A tenant's admin (or an operator, for that tenant) opens a Stripe Checkout Session to add
 * `amountCents` to the prepaid balance. The deposit is recorded first, so the session Stripe makes
 * is tied to a row we own; nothing is credited here: the signed webhook credits it once Stripe says
 * it is paid. An unverified sign-up or a suspended tenant cannot pay in.
 */
export async function startCardDeposit(actor: Actor, tenantId: string, amountCents: number, cfg: StripeConfig = stripeConfigFromEnv()) {
  const p = actor.principal;
  if (p.kind === "tenant") {
    if (p.tenantId !== tenantId) throw notFound("Tenant");
    if (p.role !== "tenant_admin") throw forbidden("Only the organisation's admins add funds");
  } else if (p.kind !== "operator") throw forbidden("Card deposits are for tenants' admins and operators");
  const limits = cardDepositLimits();
  if (amountCents < limits.minCents || amountCents > limits.maxCents)
    throw validationFailed([
      {
        path: "amount_cents",
        message: `Between ${formatCents(limits.minCents, limits.currency.toUpperCase())} and ${formatCents(limits.maxCents, limits.currency.toUpperCase())}`,
      },
    ]);
  const tenant = await db().tenant.findUnique({
    where: { id: tenantId },
    select: { status: true, billingEmail: true, signupExpiresAt: true },
  });
  if (!tenant) throw notFound("Tenant");
  if (tenant.status !== "active") throw forbidden("Tenant is suspended");
  if (tenant.signupExpiresAt) throw forbidden("The account's email address is not verified yet");
  const available = cardDepositsAvailable(cfg);
  if (!available.available) throw conflict(available.why, [{ path: "amount_cents", message: "Card payments are not available here" }]);
  const client = stripeClient(cfg)!;

  const id = randomUUID();
  await db().$transaction(async (tx) => {
    await tx.cardDeposit.create({
      data: { id, tenantId, amountCents: BigInt(amountCents), currency: limits.currency, createdBy: p.label },
    });
    await recordAudit(tx, actor, {
      action: "billing.card_deposit_started",
      targetType: "card_deposit",
      targetId: id,
      tenantId,
      details: { amount_cents: amountCents, currency: limits.currency },
    });
  });
  const billing = publicUrl(p.kind === "operator" ? `/admin/tenants/${tenantId}` : "/dashboard/billing");
  let session: { id: string; url: string };
  try {
    session = await createDepositCheckout(
      client,
      {
        id,
        tenantId,
        amountCents,
        currency: limits.currency,
        label: depositLabel(id),
        customerEmail: tenant.billingEmail,
        product: productName(),
      },
      { success: `${billing}?deposit=${id}`, cancel: `${billing}?deposit=${id}&cancelled=1` },
    );
  } catch (e) {
    logger.warn("Stripe Checkout for a card deposit could not be opened", { deposit: id, error: String(e) });
    await db().cardDeposit.update({
      where: { id },
      data: { status: "failed", closedAt: new Date(), failureMessage: "Stripe could not be reached to open the payment page" },
    });
    throw unavailable("Stripe could not be reached to open the payment page; try again in a moment");
  }
  const deposit = await db().cardDeposit.update({ where: { id }, data: { stripeSessionId: session.id, checkoutUrl: session.url } });
  return { id, url: session.url, session_id: session.id, deposit };
}

/** A tenant's card deposits, newest first (what the billing page lists: open, paid, expired, failed, refunded). */
export async function listCardDeposits(p: Principal, tenantId: string, opts: { limit: number; before?: string }) {
  if (p.kind === "tenant" && p.tenantId !== tenantId) throw notFound("Tenant");
  if (p.kind !== "tenant" && p.kind !== "operator") throw forbidden("Billing is for operators and tenants");
  if (!(await db().tenant.count({ where: { id: tenantId } }))) throw notFound("Tenant");
  const before = opts.before
    ? await db().cardDeposit.findFirst({ where: { id: opts.before, tenantId }, select: { createdAt: true } })
    : null;
  const rows = await db().cardDeposit.findMany({
    where: { tenantId, ...(before ? { createdAt: { lt: before.createdAt } } : {}) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
  });
  const data = rows.slice(0, opts.limit).map(cardDepositJson);
  return { data, nextCursor: rows.length > opts.limit ? data[data.length - 1]!.id : null };
}

export function cardDepositJson(d: {
  id: string;
  tenantId: string;
  amountCents: bigint;
  currency: string;
  status: string;
  refundedCents: bigint;
  failedAttempts: number;
  failureMessage: string | null;
  createdBy: string;
  createdAt: Date;
  paidAt: Date | null;
  closedAt: Date | null;
}): z.input<typeof cardDepositJsonSchema> {
  return {
    id: d.id,
    reference: depositLabel(d.id),
    tenant_id: d.tenantId,
    amount_cents: Number(d.amountCents),
    currency: d.currency,
    status: oneOf(CARD_DEPOSIT_STATUSES, d.status, "card_deposits.status"),
    refunded_cents: Number(d.refundedCents),
    failed_attempts: d.failedAttempts,
    failure_message: d.failureMessage,
    created_by: d.createdBy,
    created_at: d.createdAt.toISOString(),
    paid_at: d.paidAt?.toISOString() ?? null,
    closed_at: d.closedAt?.toISOString() ?? null,
  };
}
