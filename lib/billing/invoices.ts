import "server-only";
import { assertOperator, type Actor, type Principal } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { conflict, forbidden, invalidTransition, isUniqueViolation, notFound, nothingToInvoice } from "@/lib/errors";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { logger } from "@/lib/logger";
import { oneOf } from "@/lib/vocabulary";
import { lockPrismaTransaction } from "@/lib/db/locks";
import { assertTenantVisible, balanceOf } from "./ledger";
import { accrueRunningUsage } from "./meter";
import { gpuHours, invoiceLabel, isNegligibleLine, lastFullMonth } from "./money";
import { createInvoiceCheckout, expireCheckoutSession, stripeClient, stripeConfigFromEnv, type StripeConfig } from "./stripe";
import { INVOICE_STATUSES } from "./schemas";

const withLines = { lines: { orderBy: [{ gpuType: "asc" as const }, { description: "asc" as const }] } };
type InvoiceRow = NonNullable<Awaited<ReturnType<typeof findInvoice>>>;
const findInvoice = (id: string) => db().invoice.findUnique({ where: { id }, include: withLines });

export const publicUrl = () => (env().NEXTAUTH_URL ?? "http://localhost:3000").replace(/\/$/, "");
/** Without Stripe, an invoice is paid on the tenant's local payment page (prepaid balance) or recorded by an operator. */
export const localPaymentUrl = (id: string) => `${publicUrl()}/dashboard/billing/invoices/${id}`;

export function invoiceJson(inv: InvoiceRow) {
  const byType = new Map<string, { gpu_type: string; gpu_seconds: number; amount_cents: number; jobs: Array<{ job_id: string | null; endpoint_id: string | null; reservation_id: string | null; description: string; gpu_seconds: number; amount_cents: number }> }>();
  for (const l of inv.lines) {
    if (isNegligibleLine(l.gpuSeconds, l.amountCents)) continue;
    const g = byType.get(l.gpuType) ?? { gpu_type: l.gpuType, gpu_seconds: 0, amount_cents: 0, jobs: [] };
    g.gpu_seconds += Number(l.gpuSeconds);
    g.amount_cents += Number(l.amountCents);
    g.jobs.push({ job_id: l.jobId, endpoint_id: l.endpointId, reservation_id: l.reservationId, description: l.description, gpu_seconds: Number(l.gpuSeconds), amount_cents: Number(l.amountCents) });
    byType.set(l.gpuType, g);
  }
  return {
    id: inv.id,
    number: invoiceLabel(inv.number),
    tenant_id: inv.tenantId,
    period_start: inv.periodStart.toISOString(),
    period_end: inv.periodEnd.toISOString(),
    amount_cents: Number(inv.amountCents),
    status: oneOf(INVOICE_STATUSES, inv.status, "invoices.status"),
    payment_url: inv.status === "pending" ? (inv.stripeUrl ?? localPaymentUrl(inv.id)) : null,
    payment_method: inv.paymentMethod as "stripe" | "balance" | "bank" | null,
    paid_at: inv.paidAt?.toISOString() ?? null,
    created_at: inv.createdAt.toISOString(),
    lines: [...byType.values()].map((g) => ({ ...g, gpu_hours: gpuHours(g.gpu_seconds) })),
  };
}

/**
 * Invoices a tenant's usage for a period (default: the last full month, UTC). Running work is
 * billed up to the period's end first, so it is included; usage already invoiced never is again.
 * Numbers are sequential without gaps. With Stripe configured the invoice gets a Checkout link.
 */
export async function generateInvoice(actor: Actor, tenantId: string, input: { period_start?: string; period_end?: string }, opts: { now?: Date; stripe?: StripeConfig } = {}) {
  assertOperator(actor.principal);
  const now = opts.now ?? new Date();
  const month = lastFullMonth(now);
  const start = input.period_start ? new Date(input.period_start) : month.start;
  const end = input.period_end ? new Date(input.period_end) : input.period_start ? now : month.end;
  if (!(end > start)) throw conflict("The period must end after it starts", [{ path: "period_end", message: "Must be after period_start" }]);
  if (!(await db().tenant.findUnique({ where: { id: tenantId }, select: { id: true } }))) throw notFound("Tenant");
  await accrueRunningUsage({ tenantId, until: end < now ? end : now, prepaidEveryS: 0, invoiceEveryS: 0 });

  let invoiceId: string;
  try {
    invoiceId = await db().$transaction(async (tx) => {
      await lockPrismaTransaction(tx, "invoices");
      const existing = await tx.invoice.findFirst({ where: { tenantId, periodStart: start, periodEnd: end, status: { not: "void" } }, select: { number: true } });
      if (existing) throw conflict(`This period is already invoiced (${invoiceLabel(existing.number)})`, [{ path: "period_start", message: "Already invoiced" }]);
      // one line per job, per endpoint (all its replicas' time together), per reservation (all its nodes' time) and per pod (all its runs)
      const usage = await tx.$queryRaw<Array<{ id: string; job_id: string | null; endpoint_id: string | null; reservation_id: string | null; pod_id: string | null; subject_name: string; gpu_type: string; gpu_count: number; gpu_seconds: bigint; amount_cents: bigint }>>`
        SELECT u.id, u.job_id, u.endpoint_id, u.reservation_id, u.pod_id,
               COALESCE(j.name, 'Endpoint ' || e.name, 'Pod ' || p.name, 'Reservation ' || left(rv.id::text, 8) || ' (' || rv.node_count || ' whole nodes, ' || to_char(rv.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') || ' UTC)') AS subject_name,
               u.gpu_type, u.gpu_count, u.gpu_seconds, u.amount_cents
          FROM usage_events u LEFT JOIN jobs j ON j.id = u.job_id LEFT JOIN endpoints e ON e.id = u.endpoint_id LEFT JOIN reservations rv ON rv.id = u.reservation_id LEFT JOIN pods p ON p.id = u.pod_id
         WHERE u.tenant_id = ${tenantId}::uuid AND u.settlement = 'invoice' AND u.invoice_id IS NULL
           AND u.ended_at > ${start} AND u.ended_at <= ${end}
         FOR UPDATE OF u`;
      const total = usage.reduce((s, u) => s + Number(u.amount_cents), 0);
      if (total === 0) throw nothingToInvoice("No billable usage in this period");
      const [{ next }] = await tx.$queryRaw<[{ next: number }]>`SELECT COALESCE(max(number), 0)::int + 1 AS next FROM invoices`;
      const inv = await tx.invoice.create({ data: { number: next, tenantId, periodStart: start, periodEnd: end, amountCents: BigInt(total), createdBy: actor.principal.label }, select: { id: true } });
      const lines = new Map<string, { gpu_type: string; job_id: string | null; endpoint_id: string | null; reservation_id: string | null; pod_id: string | null; description: string; gpu_seconds: number; amount_cents: number }>();
      for (const u of usage) {
        const key = u.job_id ?? (u.endpoint_id ? `endpoint:${u.endpoint_id}` : u.pod_id ? `pod:${u.pod_id}` : `reservation:${u.reservation_id}`);
        const what = u.job_id || u.pod_id ? `${u.gpu_count} × ${u.gpu_type}` : u.endpoint_id ? `replicas of ${u.gpu_count} × ${u.gpu_type}` : `${u.gpu_type} nodes, billed for the whole window`;
        const l = lines.get(key) ?? { gpu_type: u.gpu_type, job_id: u.job_id, endpoint_id: u.endpoint_id, reservation_id: u.reservation_id, pod_id: u.pod_id, description: `${u.subject_name} (${what})`, gpu_seconds: 0, amount_cents: 0 };
        l.gpu_seconds += Number(u.gpu_seconds);
        l.amount_cents += Number(u.amount_cents);
        lines.set(key, l);
      }
      await tx.invoiceLine.createMany({
        // usage of a few seconds that costs nothing is settled with the rest but gets no line of its own
        data: [...lines.values()].filter((l) => !isNegligibleLine(l.gpu_seconds, l.amount_cents)).map((l) => ({ invoiceId: inv.id, gpuType: l.gpu_type, jobId: l.job_id, endpointId: l.endpoint_id, reservationId: l.reservation_id, podId: l.pod_id, description: l.description, gpuSeconds: BigInt(l.gpu_seconds), amountCents: BigInt(l.amount_cents) })),
      });
      await tx.$executeRaw`UPDATE usage_events SET invoice_id = ${inv.id}::uuid WHERE id = ANY(${usage.map((u) => u.id)}::uuid[])`;
      await recordAudit(tx, actor, { action: "billing.invoice_created", targetType: "invoice", targetId: inv.id, tenantId, details: { number: next, amount_cents: total, period_start: start.toISOString(), period_end: end.toISOString(), usage_events: usage.length } });
      return inv.id;
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict("This period is already invoiced", [{ path: "period_start", message: "Already invoiced" }]);
    throw e;
  }
  await attachStripeCheckout(invoiceId, opts.stripe);
  return (await findInvoice(invoiceId))!;
}

/** Gives a pending invoice its Stripe Checkout link when Stripe is configured. A failure leaves the local payment page in place. */
export async function attachStripeCheckout(invoiceId: string, cfg: StripeConfig = stripeConfigFromEnv()) {
  const client = stripeClient(cfg);
  if (!client) return;
  const inv = await db().invoice.findUniqueOrThrow({ where: { id: invoiceId }, select: { id: true, number: true, amountCents: true, status: true, stripeSessionId: true, tenantId: true } });
  if (inv.status !== "pending" || inv.stripeSessionId) return;
  const tenant = await db().tenant.findUniqueOrThrow({ where: { id: inv.tenantId }, select: { billingEmail: true } });
  try {
    const s = await createInvoiceCheckout(client, { id: inv.id, label: invoiceLabel(inv.number), amountCents: Number(inv.amountCents), customerEmail: tenant.billingEmail }, {
      success: `${localPaymentUrl(inv.id)}?paid=stripe`,
      cancel: localPaymentUrl(inv.id),
    });
    await db().invoice.update({ where: { id: inv.id }, data: { stripeSessionId: s.id, stripeUrl: s.url } });
  } catch (e) {
    logger.warn("stripe checkout creation failed; the local payment page stays the payment link", { invoice: inv.id, error: String(e) });
  }
}

/** The monthly run (cron, 1st of the month): one invoice per active tenant with usage, idempotent per tenant and period. */
export async function invoiceLastMonth(now = new Date(), only?: string[]) {
  const tenants = await db().tenant.findMany({ where: { status: "active", billingMode: "invoice", ...(only ? { id: { in: only } } : {}) }, select: { id: true } });
  const out = { created: 0, nothing: 0, already: 0 };
  for (const t of tenants) {
    try {
      await generateInvoice({ principal: { kind: "operator", label: "monthly invoicing" } }, t.id, {}, { now });
      out.created++;
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === "nothing_to_invoice") out.nothing++;
      else if (code === "conflict") out.already++;
      else throw e;
    }
  }
  return out;
}

export async function getInvoiceOrThrow(p: Principal, id: string) {
  const inv = await findInvoice(id);
  if (!inv) throw notFound("Invoice");
  if (p.kind === "agent" || (p.kind === "tenant" && inv.tenantId !== p.tenantId)) throw notFound("Invoice");
  return inv;
}

export async function listInvoices(p: Principal, opts: { tenantId?: string; status?: string; limit: number; cursor?: string }) {
  if (opts.tenantId) assertTenantVisible(p, opts.tenantId);
  else if (p.kind !== "operator") throw forbidden("Operators list every tenant's invoices");
  if (opts.tenantId && !(await db().tenant.findUnique({ where: { id: opts.tenantId }, select: { id: true } }))) throw notFound("Tenant");
  const rows = await db().invoice.findMany({
    where: { ...(opts.tenantId ? { tenantId: opts.tenantId } : {}), ...(opts.status ? { status: opts.status } : {}), ...afterCursor(decodeCursor(opts.cursor)) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
    include: withLines,
  });
  return page(rows, opts.limit);
}

/**
 * Pays a pending invoice: from the tenant's prepaid balance (the tenant or an operator), or as a
 * bank transfer an operator received. The tenant row lock serialises spending of one balance.
 */
export async function payInvoice(actor: Actor, id: string, input: { method: "balance" | "bank"; reference?: string }, stripe?: StripeConfig) {
  const p = actor.principal;
  if (p.kind === "agent") throw forbidden("Agents do not pay invoices");
  await db().$transaction(async (tx) => {
    const found = await tx.invoice.findUnique({ where: { id }, select: { tenantId: true } });
    if (!found || (p.kind === "tenant" && found.tenantId !== p.tenantId)) throw notFound("Invoice");
    if (input.method === "bank" && p.kind !== "operator") throw forbidden("Only operators record bank payments");
    await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${found.tenantId}::uuid FOR UPDATE`;
    const [inv] = await tx.$queryRaw<Array<{ status: string; amount_cents: bigint; number: number }>>`SELECT status, amount_cents, number FROM invoices WHERE id = ${id}::uuid FOR UPDATE`;
    if (inv!.status !== "pending") throw invalidTransition(`This invoice is ${inv!.status}`);
    const amount = Number(inv!.amount_cents);
    if (input.method === "balance") {
      const balance = await balanceOf(found.tenantId, tx);
      if (balance < amount) throw conflict(`The prepaid balance (${balance} cents) does not cover ${amount} cents`, [{ path: "method", message: "Insufficient balance" }]);
      await tx.ledgerEntry.create({ data: { tenantId: found.tenantId, kind: "invoice_payment", amountCents: BigInt(-amount), invoiceId: id, description: `Payment of ${invoiceLabel(inv!.number)}`, createdBy: p.label } });
    }
    await tx.invoice.update({ where: { id }, data: { status: "paid", paidAt: new Date(), paymentMethod: input.method, paymentReference: input.reference ?? null } });
    await recordAudit(tx, actor, { action: "billing.invoice_paid", targetType: "invoice", targetId: id, tenantId: found.tenantId, details: { method: input.method, reference: input.reference ?? null, amount_cents: amount } });
  });
  await closeCheckout(id, stripe);
  return (await findInvoice(id))!;
}

/**
 * A settled invoice's Stripe Checkout Session is expired, so it cannot take a card payment too. If
 * Stripe cannot be reached the session stays open, and a payment through it is caught by the
 * webhook, which raises an operator alert instead of keeping the money silently.
 */
async function closeCheckout(invoiceId: string, cfg: StripeConfig = stripeConfigFromEnv()) {
  const inv = await db().invoice.findUnique({ where: { id: invoiceId }, select: { stripeSessionId: true } });
  const client = stripeClient(cfg);
  if (!inv?.stripeSessionId || !client) return;
  try {
    await expireCheckoutSession(client, inv.stripeSessionId);
  } catch (e) {
    logger.warn("could not expire the Stripe Checkout session of a settled invoice; a card payment through it will raise an alert", { invoice: invoiceId, error: String(e) });
  }
}

/** Operators void a pending invoice (a mistake, a credit note); its usage can be invoiced again. */
export async function voidInvoice(actor: Actor, id: string, stripe?: StripeConfig) {
  assertOperator(actor.principal);
  await db().$transaction(async (tx) => {
    const [inv] = await tx.$queryRaw<Array<{ status: string; tenant_id: string }>>`SELECT status, tenant_id FROM invoices WHERE id = ${id}::uuid FOR UPDATE`;
    if (!inv) throw notFound("Invoice");
    if (inv.status !== "pending") throw invalidTransition(`A ${inv.status} invoice cannot be voided`);
    await tx.invoice.update({ where: { id }, data: { status: "void", voidedAt: new Date() } });
    const released = await tx.$executeRaw`UPDATE usage_events SET invoice_id = NULL WHERE invoice_id = ${id}::uuid`;
    await recordAudit(tx, actor, { action: "billing.invoice_voided", targetType: "invoice", targetId: id, tenantId: inv.tenant_id, details: { usage_events_released: released } });
  });
  await closeCheckout(id, stripe);
  return (await findInvoice(id))!;
}

/**
 * Operators refund (part of) a paid invoice to the tenant's balance: an SLA credit, a run lost to
 * hardware. Refunds of one invoice never add up to more than it was paid (checked under its row lock).
 */
export async function refundInvoice(actor: Actor, id: string, input: { amount_cents: number; reason: string }) {
  assertOperator(actor.principal);
  return db().$transaction(async (tx) => {
    const [inv] = await tx.$queryRaw<Array<{ status: string; tenant_id: string; amount_cents: bigint; number: number }>>`
      SELECT status, tenant_id, amount_cents, number FROM invoices WHERE id = ${id}::uuid FOR UPDATE`;
    if (!inv) throw notFound("Invoice");
    if (inv.status !== "paid") throw invalidTransition(`Only a paid invoice can be refunded; this one is ${inv.status}`);
    const [{ refunded }] = await tx.$queryRaw<[{ refunded: bigint }]>`
      SELECT COALESCE(sum(amount_cents), 0)::bigint AS refunded FROM ledger_entries WHERE invoice_id = ${id}::uuid AND kind = 'refund'`;
    const left = Number(inv.amount_cents) - Number(refunded);
    if (input.amount_cents > left) throw conflict(`At most ${left} cents of ${invoiceLabel(inv.number)} can still be refunded`, [{ path: "amount_cents", message: `At most ${left}` }]);
    const entry = await tx.ledgerEntry.create({
      data: { tenantId: inv.tenant_id, kind: "refund", amountCents: BigInt(input.amount_cents), invoiceId: id, description: `Refund on ${invoiceLabel(inv.number)}: ${input.reason}`, createdBy: actor.principal.label },
    });
    await recordAudit(tx, actor, { action: "billing.refund", targetType: "invoice", targetId: id, tenantId: inv.tenant_id, details: { amount_cents: input.amount_cents, reason: input.reason } });
    return { entry, balance: await balanceOf(inv.tenant_id, tx), refundable: left - input.amount_cents };
  });
}
