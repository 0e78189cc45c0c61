import { statement } from "@/lib/db/statement";

// Tenants' limits and prepaid reservations' statements (lib/db/statement.ts), checked against the
// migrated database by tests/integration/sql-statements.test.ts.

/** The tenant $1's limits, its billing mode and balance (its row already locked by the caller). */
export const TENANT_LIMITS = statement("tenants.limits", {
  params: ["uuid"],
  columns: { billing_mode: "text", max_pods: "int4?", max_reservation_hours: "int4?", max_reservations: "int4?", balance: "int8" },
  text: `SELECT billing_mode, max_pods, max_reservation_hours, max_reservations,
                (SELECT COALESCE(sum(amount_cents), 0)::bigint FROM ledger_entries l WHERE l.tenant_id = t.id) AS balance
           FROM tenants t WHERE id = $1::uuid`,
});

/** The tenant $1's pods that count against its limit (not stopped, failed or terminated). */
export const ACTIVE_PODS = statement("tenants.active-pods", {
  params: ["uuid"],
  columns: { n: "int4" },
  text: `SELECT count(*)::int AS n FROM pods WHERE tenant_id = $1::uuid AND status IN ('pending', 'starting', 'running', 'stopping')`,
});

/** The tenant $1's live reservations that have not reached their end. */
export const LIVE_RESERVATIONS = statement("tenants.live-reservations", {
  params: ["uuid"],
  columns: { n: "int4" },
  text: `SELECT count(*)::int AS n FROM reservations WHERE tenant_id = $1::uuid AND status IN ('confirmed', 'active') AND ends_at > now()`,
});

/** The rate in force now for the GPU type $1 (its own, else the `*` rate), in cents per GPU-hour. */
export const RATE_NOW = statement("tenants.rate-now", {
  params: ["text"],
  columns: { cents_per_hour: "int4" },
  text: `SELECT cents_per_hour FROM gpu_rates WHERE gpu_type IN ($1, '*') AND effective_from <= now()
          ORDER BY (gpu_type = '*'), effective_from DESC LIMIT 1`,
});

/** A reservation's up-front payment and what it came to so far ($1 the reservation, $2 the cents added). */
export const ADD_PREPAID = statement("tenants.add-prepaid", {
  params: ["uuid", "int8"],
  columns: {},
  text: `UPDATE reservations SET prepaid_cents = COALESCE(prepaid_cents, 0) + $2 WHERE id = $1::uuid`,
});

/** The reservation $1's up-front payment, returns so far, and its window. */
export const PREPAID_OF = statement("tenants.prepaid-of", {
  params: ["uuid"],
  columns: { prepaid_cents: "int8?", returned: "int8", starts_at: "timestamptz", ends_at: "timestamptz", tenant_id: "uuid" },
  text: `SELECT r.prepaid_cents, r.starts_at, r.ends_at, r.tenant_id,
                (SELECT COALESCE(sum(amount_cents), 0)::bigint FROM ledger_entries l WHERE l.reservation_id = r.id AND l.kind = 'reservation_return') AS returned
           FROM reservations r WHERE r.id = $1::uuid`,
});
