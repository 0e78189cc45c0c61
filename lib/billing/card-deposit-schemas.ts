import { z } from "zod";
import { CARD_DEPOSIT_STATUSES } from "./card-deposit-lifecycle";

export const cardDepositCheckoutBody = z
  .strictObject({
    amount_cents: z
      .number({ error: "Whole cents" })
      .int("Must be a whole number of cents")
      .min(1, "Must be at least 1 cent")
      .max(100_000_000),
  })
  .meta({
    id: "CardDepositCheckout",
    description:
      "Opens a Stripe Checkout Session for the amount (minimum and maximum from CARD_DEPOSIT_MIN_CENTS / CARD_DEPOSIT_MAX_CENTS).",
    example: { amount_cents: 5000 },
  });

export const cardDepositJsonSchema = z
  .object({
    id: z.string(),
    reference: z.string(),
    tenant_id: z.string(),
    amount_cents: z.number().int(),
    currency: z.string(),
    status: z.enum(CARD_DEPOSIT_STATUSES),
    refunded_cents: z.number().int(),
    failed_attempts: z.number().int(),
    failure_message: z.string().nullable(),
    created_by: z.string(),
    created_at: z.string(),
    paid_at: z.string().nullable(),
    closed_at: z.string().nullable(),
  })
  .meta({ id: "CardDeposit" });
