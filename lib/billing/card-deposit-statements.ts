import { statement } from "@/lib/db/statement";

// Card deposits' raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts. Lookups take the text Stripe sent ($1), so a value
// that is not one of ours simply finds nothing.

const COLUMNS = {
  id: "uuid",
  tenant_id: "uuid",
  amount_cents: "int8",
  currency: "text",
  status: "text",
  stripe_session_id: "text?",
  stripe_payment_intent: "text?",
  refunded_cents: "int8",
} as const;
const SELECT = `SELECT id, tenant_id, amount_cents, currency, status, stripe_session_id, stripe_payment_intent, refunded_cents FROM card_deposits`;

/** The deposit of the Checkout Session $1, or (a session whose id we failed to store) of our id $2 when it has no session yet; locked. */
export const LOCK_DEPOSIT_FOR_SESSION = statement("billing.lock-deposit-for-session", {
  params: ["text", "text"],
  columns: COLUMNS,
  text: `${SELECT} WHERE stripe_session_id = $1 OR (stripe_session_id IS NULL AND id::text = $2) ORDER BY stripe_session_id NULLS LAST LIMIT 1 FOR UPDATE`,
});

/** The deposit paid with the PaymentIntent $1, or (not known to be paid yet) of our id $2; locked. */
export const LOCK_DEPOSIT_FOR_INTENT = statement("billing.lock-deposit-for-intent", {
  params: ["text", "text"],
  columns: COLUMNS,
  text: `${SELECT} WHERE stripe_payment_intent = $1 OR id::text = $2 ORDER BY stripe_payment_intent NULLS LAST LIMIT 1 FOR UPDATE`,
});

/**
 * A critical operator alert about a card payment the webhook could not apply ($1 dedupe key, $2
 * subject id, $3 label, $4 message, $5 details): operators' business, so no tenant sees it.
 */
export const FIRE_PAYMENT_ALERT = statement("billing.fire-payment-alert", {
  params: ["text", "text", "text", "text", "jsonb"],
  columns: { id: "text" },
  text: `
    INSERT INTO alert_events (rule_type, dedupe_key, subject_type, subject_id, subject_label, severity, message, details)
    VALUES ('unexpected_payment', $1, 'card_deposit', $2, $3, 'critical', $4, $5::jsonb)
    ON CONFLICT (dedupe_key) WHERE status = 'firing' DO NOTHING RETURNING id::text`,
});
