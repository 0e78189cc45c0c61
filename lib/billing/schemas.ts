import { z } from "zod";
import { paginationQuery } from "@/lib/http/pagination";

const cents = (max: number) => z.number().int("Must be a whole number of cents").min(1, "Must be at least 1 cent").max(max);

export const gpuTypeParams = z.strictObject({
  gpu_type: z.string().regex(/^(\*|[A-Za-z0-9][A-Za-z0-9_.-]{0,63})$/, "Must be a GPU type such as H100, or * for every other type"),
});

export const setRateBody = z
  .strictObject({ cents_per_hour: z.number().int("Must be a whole number of cents").min(0).max(10_000_000) })
  .meta({
    id: "SetGpuRate",
    description: "Takes effect now; past usage keeps the rate in force when it ran.",
    example: { cents_per_hour: 249 },
  });

export const rateJsonSchema = z
  .object({
    gpu_type: z.string(),
    cents_per_hour: z.number().int(),
    effective_from: z.string(),
    created_by: z.string(),
    history: z.array(z.object({ cents_per_hour: z.number().int(), effective_from: z.string(), created_by: z.string() })),
  })
  .meta({ id: "GpuRate" });

const isoDate = z.iso.datetime({ offset: true, message: "Must be an ISO-8601 time" });

export const createInvoiceBody = z
  .strictObject({ period_start: isoDate.optional(), period_end: isoDate.optional() })
  .refine((b) => !b.period_start || !b.period_end || new Date(b.period_end) > new Date(b.period_start), {
    message: "period_end must be after period_start",
    path: ["period_end"],
  })
  .meta({
    id: "CreateInvoice",
    description: "Defaults to the last full calendar month (UTC).",
    example: { period_start: "2026-10-01T00:00:00Z", period_end: "2026-11-01T00:00:00Z" },
  });

export const invoiceLineSchema = z.object({
  gpu_type: z.string(),
  gpu_seconds: z.number().int(),
  gpu_hours: z.number(),
  amount_cents: z.number().int(),
  jobs: z.array(
    z.object({
      job_id: z.string().nullable(),
      endpoint_id: z.string().nullable(),
      reservation_id: z.string().nullable(),
      covered_by_reservation_id: z
        .string()
        .nullable()
        .meta({ description: "The reservation that paid for this work (its nodes are billed on its own line); the line costs nothing" }),
      description: z.string(),
      gpu_seconds: z.number().int(),
      amount_cents: z.number().int(),
    }),
  ),
});

export const INVOICE_STATUSES = ["pending", "paid", "void"] as const;
export const PAYMENT_METHODS = ["stripe", "balance", "bank"] as const;
/** A usage row accrues while its work runs and is final once it ended (billed once: a unique key). */
export const USAGE_KINDS = ["accrual", "final"] as const;

export const invoiceJsonSchema = z
  .object({
    id: z.string(),
    number: z.string(),
    tenant_id: z.string(),
    period_start: z.string(),
    period_end: z.string(),
    amount_cents: z.number().int(),
    status: z.enum(INVOICE_STATUSES),
    payment_url: z.string().nullable(),
    payment_method: z.enum(PAYMENT_METHODS).nullable(),
    paid_at: z.string().nullable(),
    created_at: z.string(),
    lines: z.array(invoiceLineSchema),
  })
  .meta({ id: "Invoice" });

export const listInvoicesQuery = z.strictObject({ ...paginationQuery, status: z.enum(INVOICE_STATUSES).optional() });

export const usageQuery = z
  .strictObject({ from: isoDate.optional(), to: isoDate.optional() })
  .refine((q) => !q.from || !q.to || new Date(q.to) > new Date(q.from), { message: "to must be after from", path: ["to"] });

export const usageJsonSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    amount_cents: z.number().int(),
    gpu_seconds: z.number().int(),
    by_gpu_type: z.array(z.object({ gpu_type: z.string(), gpu_seconds: z.number().int(), amount_cents: z.number().int() })),
    events: z.array(
      z.object({
        id: z.string(),
        job_id: z.string().nullable(),
        endpoint_id: z.string().nullable(),
        replica_id: z.string().nullable(),
        pod_id: z.string().nullable(),
        reservation_id: z.string().nullable(),
        covered_by_reservation_id: z.string().nullable(),
        attempt: z.number().int(),
        kind: z.string(),
        gpu_type: z.string(),
        gpu_count: z.number().int(),
        started_at: z.string(),
        ended_at: z.string(),
        gpu_seconds: z.number().int(),
        cents_per_hour: z.number().int(),
        amount_cents: z.number().int(),
        invoice_id: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: "Usage" });

export const depositBody = z
  .strictObject({ amount_cents: cents(100_000_000), description: z.string().trim().max(200).optional() })
  .meta({ id: "Deposit", example: { amount_cents: 50_000, description: "Wire transfer 2026-11-28" } });

export const refundBody = z
  .strictObject({ amount_cents: cents(100_000_000), reason: z.string().trim().min(1, "Say why; the tenant reads it").max(200) })
  .meta({ id: "Refund", example: { amount_cents: 1200, reason: "SLA credit: node lost on 2026-11-12" } });

export const LEDGER_KINDS = ["deposit", "charge", "invoice_payment", "refund", "card_refund", "reservation", "reservation_return"] as const;

export const ledgerEntrySchema = z
  .object({
    id: z.string(),
    kind: z.enum(LEDGER_KINDS),
    amount_cents: z.number().int(),
    balance_after_cents: z.number().int().nullable(),
    description: z.string(),
    invoice_id: z.string().nullable(),
    created_by: z.string(),
    created_at: z.string(),
  })
  .meta({ id: "LedgerEntry" });

export const payInvoiceBody = z
  .strictObject({ method: z.enum(["balance", "bank"]), reference: z.string().trim().min(1).max(200).optional() })
  .refine((b) => b.method !== "bank" || b.reference, { message: "A bank payment needs the transfer's reference", path: ["reference"] })
  .meta({
    id: "PayInvoice",
    description: "balance: the tenant pays from its prepaid balance; bank: an operator records a received transfer.",
  });

export const summaryJsonSchema = z
  .object({
    revenue_cents: z.number().int(),
    outstanding_cents: z.number().int(),
    invoices_paid: z.number().int(),
    invoices_pending: z.number().int(),
    revenue_month_cents: z.number().int().meta({ description: "This month so far (UTC): billed plus accruing" }),
    revenue_month_billed_cents: z
      .number()
      .int()
      .meta({ description: "Usage segments the meter wrote that ended this month, invoiced or not" }),
    revenue_month_accruing_cents: z
      .number()
      .int()
      .meta({ description: "What running work has cost since its last segment; billed at the meter's next tick" }),
  })
  .meta({ id: "BillingSummary" });
