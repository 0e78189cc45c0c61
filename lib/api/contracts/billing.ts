import { z } from "zod";
import {
  createInvoiceBody,
  depositBody,
  gpuTypeParams,
  invoiceJsonSchema,
  ledgerEntrySchema,
  listInvoicesQuery,
  payInvoiceBody,
  refundBody,
  rateJsonSchema,
  setRateBody,
  summaryJsonSchema,
  usageJsonSchema,
  usageQuery,
} from "@/lib/billing/schemas";
import { cardDepositCheckoutBody, cardDepositJsonSchema } from "@/lib/billing/card-deposit-schemas";
import { defineContract } from "@/lib/http/contract";
import { errorBodySchema } from "@/lib/http/error-response";
import { paginationQuery } from "@/lib/http/pagination";
import { authErrors, idParams, listOf, notFoundError } from "./common";

const invoiceReply = z.object({ invoice: invoiceJsonSchema });
const transitionError = {
  409: { description: "Not allowed in the invoice's state, or the balance does not cover it", schema: errorBodySchema },
} as const;

export const listRates = defineContract({
  operationId: "listGpuRates",
  method: "GET",
  path: "/api/billing/rates",
  summary: "Cents per GPU-hour per GPU type, with history ('*' prices every type without its own)",
  tags: ["Billing"],
  access: ["operator", "tenant"],
  responses: { 200: { description: "Rates", schema: z.object({ data: z.array(rateJsonSchema) }) }, ...authErrors },
});

export const setRate = defineContract({
  operationId: "setGpuRate",
  method: "PUT",
  path: "/api/billing/rates/{gpu_type}",
  summary: "Set a GPU type's rate from now on (past usage keeps the rate it ran at)",
  tags: ["Billing"],
  access: ["operator"],
  params: gpuTypeParams,
  body: setRateBody,
  responses: { 200: { description: "The rate", schema: z.object({ rate: rateJsonSchema }) }, ...authErrors },
});

export const getUsage = defineContract({
  operationId: "getTenantUsage",
  method: "GET",
  path: "/api/tenants/{id}/usage",
  summary: "Billed usage in a window (default: this month so far), by GPU type and segment",
  tags: ["Billing"],
  access: ["operator", "tenant"],
  params: idParams,
  query: usageQuery,
  responses: { 200: { description: "Usage", schema: usageJsonSchema }, ...authErrors, ...notFoundError },
});

export const createInvoice = defineContract({
  operationId: "createInvoice",
  method: "POST",
  path: "/api/tenants/{id}/invoice",
  summary: "Invoice a tenant's uninvoiced usage for a period (default: the last full month)",
  tags: ["Billing"],
  access: ["operator"],
  params: idParams,
  body: createInvoiceBody,
  responses: {
    201: { description: "Created", schema: invoiceReply },
    ...authErrors,
    ...notFoundError,
    409: { description: "The period is already invoiced", schema: errorBodySchema },
    422: { description: "nothing_to_invoice: no billable usage in the period", schema: errorBodySchema },
  },
});

export const listTenantInvoices = defineContract({
  operationId: "listTenantInvoices",
  method: "GET",
  path: "/api/tenants/{id}/invoices",
  summary: "A tenant's invoices, newest first",
  tags: ["Billing"],
  access: ["operator", "tenant"],
  params: idParams,
  query: listInvoicesQuery,
  responses: { 200: { description: "Invoices", schema: listOf(invoiceJsonSchema) }, ...authErrors, ...notFoundError },
});

export const listInvoices = defineContract({
  operationId: "listInvoices",
  method: "GET",
  path: "/api/invoices",
  summary: "Every tenant's invoices, newest first",
  tags: ["Billing"],
  access: ["operator"],
  query: listInvoicesQuery,
  responses: { 200: { description: "Invoices", schema: listOf(invoiceJsonSchema) }, ...authErrors },
});

export const getInvoice = defineContract({
  operationId: "getInvoice",
  method: "GET",
  path: "/api/invoices/{id}",
  summary: "One invoice with its lines",
  tags: ["Billing"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: { 200: { description: "The invoice", schema: invoiceReply }, ...authErrors, ...notFoundError },
});

export const invoiceCsv = defineContract({
  operationId: "getInvoiceCsv",
  method: "GET",
  path: "/api/invoices/{id}/csv",
  summary: "An invoice's lines as CSV",
  tags: ["Billing"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: {
    200: { description: "The rows as CSV (RFC 4180), a header line first", schema: z.string(), mediaType: "text/csv" },
    ...authErrors,
    ...notFoundError,
  },
});

export const payInvoice = defineContract({
  operationId: "payInvoice",
  method: "POST",
  path: "/api/invoices/{id}/pay",
  summary: "Pay a pending invoice from the prepaid balance, or record a bank transfer (operators)",
  tags: ["Billing"],
  access: ["operator", "tenant"],
  params: idParams,
  body: payInvoiceBody,
  responses: { 200: { description: "Paid", schema: invoiceReply }, ...authErrors, ...notFoundError, ...transitionError },
});

export const voidInvoice = defineContract({
  operationId: "voidInvoice",
  method: "POST",
  path: "/api/invoices/{id}/void",
  summary: "Void a pending invoice; its usage can be invoiced again",
  tags: ["Billing"],
  access: ["operator"],
  params: idParams,
  responses: { 200: { description: "Voided", schema: invoiceReply }, ...authErrors, ...notFoundError, ...transitionError },
});

export const refundInvoice = defineContract({
  operationId: "refundInvoice",
  method: "POST",
  path: "/api/invoices/{id}/refund",
  summary: "Refund (part of) a paid invoice to the tenant's balance (never more than was paid)",
  tags: ["Billing"],
  access: ["operator"],
  params: idParams,
  body: refundBody,
  responses: {
    201: {
      description: "Refunded",
      schema: z.object({ entry: ledgerEntrySchema, balance_cents: z.number().int(), refundable_cents: z.number().int() }),
    },
    ...authErrors,
    ...notFoundError,
    ...transitionError,
  },
});

export const billingSummary = defineContract({
  operationId: "getBillingSummary",
  method: "GET",
  path: "/api/billing/summary",
  summary: "Revenue paid, outstanding, invoice counts, and this month's billing so far",
  tags: ["Billing"],
  access: ["operator"],
  responses: { 200: { description: "Summary", schema: summaryJsonSchema }, ...authErrors },
});

export const createDeposit = defineContract({
  operationId: "createDeposit",
  method: "POST",
  path: "/api/tenants/{id}/deposits",
  summary: "Credit a tenant's prepaid balance (operators only; tenants never credit themselves)",
  tags: ["Billing"],
  access: ["operator"],
  params: idParams,
  body: depositBody,
  responses: {
    201: { description: "Recorded", schema: z.object({ entry: ledgerEntrySchema, balance_cents: z.number().int() }) },
    ...authErrors,
    ...notFoundError,
  },
});

export const listTransactions = defineContract({
  operationId: "listTenantTransactions",
  method: "GET",
  path: "/api/tenants/{id}/transactions",
  summary: "The prepaid ledger, newest first, with the balance after each entry",
  tags: ["Billing"],
  access: ["operator", "tenant"],
  params: idParams,
  query: z.strictObject({
    limit: paginationQuery.limit,
    cursor: z
      .string()
      .regex(/^\d{1,18}$/, "Must be a ledger entry id")
      .optional(),
  }),
  responses: {
    200: { description: "Ledger entries", schema: listOf(ledgerEntrySchema).extend({ balance_cents: z.number().int() }) },
    ...authErrors,
    ...notFoundError,
  },
});

export const stripeWebhook = defineContract({
  operationId: "stripeWebhook",
  method: "POST",
  path: "/api/webhooks/stripe",
  summary: "Stripe-signed events (verified on the raw body; each event id applied once)",
  tags: ["Billing"],
  access: "public",
  bodyLimitBytes: 512 * 1024,
  rateLimitPerMinute: 6_000,
  responses: {
    200: { description: "Received", schema: z.object({ received: z.literal(true), outcome: z.string() }) },
    400: { description: "Missing or invalid Stripe-Signature", schema: errorBodySchema },
    404: { description: "Stripe webhooks are not configured", schema: errorBodySchema },
    409: {
      description: "Not applied yet (a refund of a payment whose confirmation has not arrived): Stripe delivers it again later",
      schema: errorBodySchema,
    },
  },
});

export const createCardDepositCheckout = defineContract({
  operationId: "createCardDepositCheckout",
  method: "POST",
  path: "/api/tenants/{id}/deposits/checkout",
  summary: "Open a Stripe Checkout Session that adds funds to the prepaid balance (tenant admins, operators)",
  description:
    "Answers the Checkout page's URL; nothing is credited until Stripe's signed checkout.session.completed webhook arrives, which credits the balance once. The amount must lie between CARD_DEPOSIT_MIN_CENTS and CARD_DEPOSIT_MAX_CENTS. Without Stripe configured it answers 409 and says so.",
  tags: ["Billing"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  params: idParams,
  body: cardDepositCheckoutBody,
  bodyLimitBytes: 4 * 1024,
  rateLimitPerMinute: 20,
  responses: {
    201: {
      description: "The Checkout Session to send the payer to",
      schema: z.object({ url: z.string(), session_id: z.string(), deposit: cardDepositJsonSchema }),
    },
    ...authErrors,
    ...notFoundError,
    409: { description: "Card payments are not configured on this installation", schema: errorBodySchema },
    503: { description: "Stripe could not be reached", schema: errorBodySchema },
  },
});

export const listCardDeposits = defineContract({
  operationId: "listCardDeposits",
  method: "GET",
  path: "/api/tenants/{id}/card-deposits",
  summary: "The tenant's card deposits, newest first: open, paid, expired, failed, with refunds",
  tags: ["Billing"],
  access: ["operator", "tenant"],
  params: idParams,
  query: z.strictObject({ limit: paginationQuery.limit, cursor: z.uuid("Must be a card deposit id").optional() }),
  responses: { 200: { description: "Card deposits", schema: listOf(cardDepositJsonSchema) }, ...authErrors, ...notFoundError },
});
