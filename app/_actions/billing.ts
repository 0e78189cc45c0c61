"use server";
import { z } from "zod";
import { formText, serverAction } from "@/lib/auth/action";
import { generateInvoice } from "@/lib/billing/generate-invoice";
import { payInvoice } from "@/lib/billing/pay-invoice";
import { payInvoiceByCard } from "@/lib/billing/pay-invoice-by-card";
import { refundInvoice } from "@/lib/billing/refund-invoice";
import { voidInvoice } from "@/lib/billing/void-invoice";
import { depositFunds } from "@/lib/billing/ledger";
import { startCardDeposit } from "@/lib/billing/card-deposits";
import { billing } from "@/lib/api/contracts";
import { invoiceLabel } from "@/lib/billing/money";
import { setRate } from "@/lib/billing/rates";
import { createInvoiceBody, depositBody, gpuTypeParams, refundBody, setRateBody } from "@/lib/billing/schemas";
import { updateTenant } from "@/lib/tenants/update-tenant";
import { BILLING_MODES } from "@/lib/tenants/schemas";

const pages = ["/admin/billing", "/dashboard/billing", "/admin/tenants"];
const id = z.uuid("Must be an id");
/** A dollar amount typed in a form ("1,250.50") as whole cents; anything else is passed on for the schema to name. */
const dollarsToCents = (v: string | undefined) => {
  if (v === undefined) return undefined;
  const clean = v.replace(/[$,\s]/g, "");
  return /^\d+(\.\d{1,2})?$/.test(clean) ? Math.round(Number(clean) * 100) : v;
};

export const setRateAction = serverAction(
  {
    schema: z.object({ ...gpuTypeParams.shape, ...setRateBody.shape }),
    fromForm: (f) => ({ gpu_type: formText(f, "gpu_type")?.trim() ?? "", cents_per_hour: dollarsToCents(formText(f, "price")) }),
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, input) => {
    const r = await setRate(actor, input.gpu_type, input.cents_per_hour);
    return { message: `${r.gpu_type} now costs $${(r.cents_per_hour / 100).toFixed(2)} per GPU-hour.` };
  },
);

/** A day picked in a date input ("2026-11-30") as the instant it starts in UTC, `plusDays` later; anything else is passed on for the schema to name. */
const utcDay = (v: string | undefined, plusDays = 0) => {
  if (v === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(v)) return v;
  const t = Date.parse(`${v}T00:00:00Z`);
  return Number.isNaN(t) ? v : new Date(t + plusDays * 86_400_000).toISOString();
};

export const generateInvoiceAction = serverAction(
  {
    schema: z.object({ tenant_id: id, period: createInvoiceBody }),
    // the form picks whole UTC days, the last one included: the period ends as that day does
    fromForm: (f) => ({
      tenant_id: formText(f, "tenant_id"),
      period: { period_start: utcDay(formText(f, "first_day")), period_end: utcDay(formText(f, "last_day"), 1) },
    }),
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, { tenant_id, period }) => {
    const inv = await generateInvoice(actor, tenant_id, period);
    return { message: `${invoiceLabel(inv.number)} created for $${(Number(inv.amountCents) / 100).toFixed(2)}.`, data: { id: inv.id } };
  },
);

export const payFromBalanceAction = serverAction(
  { schema: z.object({ id }), fromForm: (f) => ({ id: formText(f, "id") }), access: ["operator", "tenant"], revalidate: pages },
  async (actor, input) => {
    const inv = await payInvoice(actor, input.id, { method: "balance" });
    return { message: `${invoiceLabel(inv.number)} is paid from the prepaid balance.` };
  },
);

export const payByCardAction = serverAction(
  { schema: z.object({ id }), fromForm: (f) => ({ id: formText(f, "id") }), access: ["tenant"] },
  async (actor, input) => {
    const { url } = await payInvoiceByCard(actor, input.id);
    return { message: "Opening Stripe Checkout…", data: { url } };
  },
);

export const recordBankPaymentAction = serverAction(
  {
    schema: z.object({ id, reference: z.string().trim().min(1, "The transfer's reference is required").max(200) }),
    fromForm: (f) => ({ id: formText(f, "id"), reference: formText(f, "reference") ?? "" }),
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, input) => {
    const inv = await payInvoice(actor, input.id, { method: "bank", reference: input.reference });
    return { message: `${invoiceLabel(inv.number)} recorded as paid by bank transfer.` };
  },
);

export const voidInvoiceAction = serverAction(
  { schema: z.object({ id }), fromForm: (f) => ({ id: formText(f, "id") }), access: ["operator"], revalidate: pages },
  async (actor, input) => {
    const inv = await voidInvoice(actor, input.id);
    return { message: `${invoiceLabel(inv.number)} is void; its usage can be invoiced again.` };
  },
);

export const depositAction = serverAction(
  {
    schema: z.object({ tenant_id: id, deposit: depositBody }),
    fromForm: (f) => ({
      tenant_id: formText(f, "tenant_id"),
      deposit: { amount_cents: dollarsToCents(formText(f, "amount")), description: formText(f, "description") },
    }),
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, { tenant_id, deposit }) => {
    await depositFunds(actor, tenant_id, deposit.amount_cents, deposit.description);
    return { message: `$${(deposit.amount_cents / 100).toFixed(2)} credited.` };
  },
);

export const setBillingModeAction = serverAction(
  {
    schema: z.object({ id, billing_mode: z.enum(BILLING_MODES) }),
    fromForm: (f) => ({ id: formText(f, "id"), billing_mode: formText(f, "billing_mode") }),
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, input) => {
    const t = await updateTenant(actor, input.id, { billing_mode: input.billing_mode });
    return { message: `${t.name} is billed ${t.billingMode === "prepaid" ? "from a prepaid balance" : "by invoice"}.` };
  },
);

/** The prepaid "Add funds" action: a tenant admin opens Stripe Checkout for the amount (the browser goes there next). */
export const cardDepositAction = serverAction(
  {
    schema: depositBody.pick({ amount_cents: true }),
    fromForm: (f) => ({ amount_cents: dollarsToCents(formText(f, "amount")) }),
    access: ["tenant"],
    tenantRole: "tenant_admin",
    rateLimit: { key: billing.createCardDepositCheckout.operationId, perMinute: billing.createCardDepositCheckout.rateLimitPerMinute! },
  },
  async (actor, input) => {
    const session = await startCardDeposit(actor, actor.principal.tenantId, input.amount_cents);
    return { message: "Opening Stripe Checkout…", data: { url: session.url } };
  },
);

export const refundAction = serverAction(
  {
    schema: z.object({ id, refund: refundBody }),
    fromForm: (f) => ({
      id: formText(f, "id"),
      refund: { amount_cents: dollarsToCents(formText(f, "amount")), reason: formText(f, "reason") ?? "" },
    }),
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, { id: invoiceId, refund }) => {
    const r = await refundInvoice(actor, invoiceId, refund);
    return {
      message: `$${(refund.amount_cents / 100).toFixed(2)} refunded to the balance; $${(r.refundable / 100).toFixed(2)} of this invoice can still be refunded.`,
    };
  },
);
