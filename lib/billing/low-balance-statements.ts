import { statement } from "@/lib/db/statement";

// The low-balance warning's statements (lib/db/statement.ts), checked against the migrated
// database by tests/integration/sql-statements.test.ts.

/** Prepaid tenants (active, verified) that spent in the last day or were warned (at most $1): whose balance to look at. */
export const LOW_BALANCE_CANDIDATES = statement("billing.low-balance-candidates", {
  params: ["int4"],
  columns: { id: "uuid", warned: "bool" },
  text: `SELECT t.id, t.low_balance_warned_at IS NOT NULL AS warned FROM tenants t
          WHERE t.billing_mode = 'prepaid' AND t.status = 'active' AND t.signup_expires_at IS NULL
            AND (t.low_balance_warned_at IS NOT NULL OR EXISTS (
                  SELECT 1 FROM ledger_entries l WHERE l.tenant_id = t.id AND l.amount_cents < 0 AND l.created_at > now() - interval '1 day'))
          ORDER BY t.id LIMIT $1::int4`,
});

/** The tenant $1's warning for this episode, claimed (nothing when another instance claimed it first). */
export const CLAIM_LOW_BALANCE_WARNING = statement("billing.claim-low-balance-warning", {
  params: ["uuid"],
  columns: { id: "uuid" },
  text: `UPDATE tenants SET low_balance_warned_at = now() WHERE id = $1 AND low_balance_warned_at IS NULL RETURNING id`,
});

/** The tenant $1's episode is over (funds arrived). */
export const CLEAR_LOW_BALANCE_WARNING = statement("billing.clear-low-balance-warning", {
  params: ["uuid"],
  columns: { id: "uuid" },
  text: `UPDATE tenants SET low_balance_warned_at = NULL WHERE id = $1 AND low_balance_warned_at IS NOT NULL RETURNING id`,
});
