import { statement } from "@/lib/db/statement";

// Billing's raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts. lib/billing/invoices.ts keeps its own for now.

// The meter's accruals: work due for a segment ($1 seconds apart for prepaid tenants, $2 for
// invoiced ones; $3 one tenant or NULL; $4 the time to bill up to, NULL now) is billed through the
// database's segment functions. Each answers how many segments it wrote.

/** Running jobs. */
export const ACCRUE_JOBS = statement("billing.accrue-jobs", {
  params: ["int4", "int4", "uuid?", "timestamptz?"],
  columns: { billed: "int4" },
  text: `WITH due AS (
       SELECT j.id, j.tenant_id, j.attempts, j.gpu_type, j.gpu_count, j.started_at
         FROM jobs j JOIN tenants t ON t.id = j.tenant_id
        WHERE j.status = 'running' AND j.started_at IS NOT NULL
          AND ($3::uuid IS NULL OR j.tenant_id = $3::uuid)
          -- a run on a Slurm cluster accrues from Slurm's start only (lib/slurm/report-job.ts)
          AND NOT EXISTS (SELECT 1 FROM slurm_jobs s WHERE s.job_id = j.id AND s.attempt = j.attempts AND s.started_at IS NULL)
          AND COALESCE((SELECT max(u.ended_at) FROM usage_events u WHERE u.job_id = j.id AND u.attempt = j.attempts), j.started_at)
              <= COALESCE($4::timestamptz, now()) - make_interval(secs => CASE WHEN t.billing_mode = 'prepaid' THEN $1::int ELSE $2::int END)
        FOR UPDATE OF j SKIP LOCKED
     )
     SELECT count(bill_usage_segment(id, tenant_id, attempts, gpu_type, gpu_count, started_at, 'accrual', LEAST(COALESCE($4::timestamptz, now()), now())))::int AS billed
       FROM due`,
});

/** Live endpoint replicas. */
export const ACCRUE_REPLICAS = statement("billing.accrue-replicas", {
  params: ["int4", "int4", "uuid?", "timestamptz?"],
  columns: { billed: "int4" },
  text: `WITH due AS (
       SELECT r.id FROM endpoint_replicas r JOIN tenants t ON t.id = r.tenant_id
        WHERE r.status <> 'stopped' AND ($3::uuid IS NULL OR r.tenant_id = $3::uuid)
          AND COALESCE((SELECT max(u.ended_at) FROM usage_events u WHERE u.replica_id = r.id), r.started_at)
              <= COALESCE($4::timestamptz, now()) - make_interval(secs => CASE WHEN t.billing_mode = 'prepaid' THEN $1::int ELSE $2::int END)
        FOR UPDATE OF r SKIP LOCKED
     )
     SELECT count(bill_replica_segment(id, 'accrual', LEAST(COALESCE($4::timestamptz, now()), now())))::int AS billed FROM due`,
});

/** Running pods. */
export const ACCRUE_PODS = statement("billing.accrue-pods", {
  params: ["int4", "int4", "uuid?", "timestamptz?"],
  columns: { billed: "int4" },
  text: `WITH due AS (
       SELECT pl.pod_id, pl.attempt FROM pod_placements pl JOIN pods p ON p.id = pl.pod_id JOIN tenants t ON t.id = p.tenant_id
        WHERE pl.ended_at IS NULL AND pl.running_at IS NOT NULL AND ($3::uuid IS NULL OR p.tenant_id = $3::uuid)
          AND COALESCE((SELECT max(u.ended_at) FROM usage_events u WHERE u.pod_id = pl.pod_id AND u.attempt = pl.attempt), pl.running_at)
              <= COALESCE($4::timestamptz, now()) - make_interval(secs => CASE WHEN t.billing_mode = 'prepaid' THEN $1::int ELSE $2::int END)
        FOR UPDATE OF pl SKIP LOCKED
     )
     SELECT count(bill_pod_segment(pod_id, attempt, 'accrual', LEAST(COALESCE($4::timestamptz, now()), now())))::int AS billed FROM due`,
});

/** Nodes reservations hold: their whole window, used or not, never past its end (a handover's time excepted). */
export const ACCRUE_RESERVED_NODES = statement("billing.accrue-reserved-nodes", {
  params: ["int4", "int4", "uuid?", "timestamptz?"],
  columns: { billed: "int4" },
  text: `WITH due AS (
       SELECT h.id FROM reservation_nodes h JOIN tenants t ON t.id = h.tenant_id JOIN reservations rv ON rv.id = h.reservation_id
        WHERE h.live AND h.closed_at IS NULL AND h.starts_at < LEAST(COALESCE($4::timestamptz, now()), now()) AND ($3::uuid IS NULL OR h.tenant_id = $3::uuid)
          -- a node in its handover (wipe, attestation) is nobody's yet: billing of a holding that began meanwhile starts at its end
          AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = h.node_id
                           AND COALESCE(n.status_before_offline, n.status) IN ('releasing', 'wiping', 'inspecting', 'attestation_failed'))
          AND COALESCE((SELECT max(u.ended_at) FROM usage_events u WHERE u.reservation_node_id = h.id), h.starts_at)
              <= COALESCE($4::timestamptz, now()) - make_interval(secs => CASE WHEN t.billing_mode = 'prepaid' THEN $1::int ELSE $2::int END)
        -- the reservation too, as every path that closes holdings locks it first: a segment drawn
        -- from its up-front payment locks it (ledger_entries_draw_reservation_prepayment), and
        -- taking it here, never waiting, keeps the order reservation → holding (no deadlock)
        FOR UPDATE OF h, rv SKIP LOCKED
     )
     SELECT count(bill_reservation_segment(id, 'accrual', LEAST(COALESCE($4::timestamptz, now()), now())))::int AS billed FROM due`,
});

/** Prepaid tenants' exhaustion recorded (or forgotten once funded); which are at zero, and past the grace of $1 seconds. */
export const MARK_EXHAUSTED_TENANTS = statement("billing.mark-exhausted-tenants", {
  params: ["int4"],
  columns: { id: "uuid", exhausted: "bool", over_grace: "bool" },
  text: `WITH b AS (
         SELECT t.id, t.balance_exhausted_at, COALESCE((SELECT sum(amount_cents) FROM ledger_entries l WHERE l.tenant_id = t.id), 0) AS balance
           FROM tenants t WHERE t.billing_mode = 'prepaid' FOR UPDATE OF t
       )
       UPDATE tenants t SET balance_exhausted_at = CASE WHEN b.balance <= 0 THEN COALESCE(b.balance_exhausted_at, now()) END
         FROM b WHERE t.id = b.id
       RETURNING t.id, b.balance <= 0 AS exhausted,
                 (b.balance <= 0 AND b.balance_exhausted_at < now() - make_interval(secs => $1::int)) AS over_grace`,
});

/** The waiting jobs of the tenants $1 (at zero) blocked for billing, with their events. */
export const BLOCK_JOBS_FOR_BILLING = statement("billing.block-jobs-for-billing", {
  params: ["uuid[]"],
  columns: {},
  text: `WITH old AS (
         SELECT id, status FROM jobs WHERE tenant_id = ANY($1::uuid[]) AND (status = 'queued' OR (status = 'blocked' AND block_reason = 'quota')) FOR UPDATE
       ), b AS (
         UPDATE jobs j SET status = 'blocked', block_reason = 'billing', updated_at = now(),
                pending_reason = 'Billing: your prepaid balance is used up; add funds and it runs'
           FROM old WHERE j.id = old.id
          RETURNING j.id, old.status AS from_status
       ) INSERT INTO job_events (job_id, from_status, to_status, reason, actor)
         SELECT id, from_status, 'blocked', 'prepaid balance used up', 'billing' FROM b WHERE from_status <> 'blocked'`,
});

/** Jobs blocked for billing of tenants not in $1 (funded, or no longer prepaid) queued again, with their events. */
export const UNBLOCK_FUNDED_JOBS = statement("billing.unblock-funded-jobs", {
  params: ["uuid[]"],
  columns: {},
  text: `WITH u AS (
         UPDATE jobs SET status = 'queued', block_reason = NULL, pending_reason = 'Funds added; waiting for the next scheduling cycle', updated_at = now()
          WHERE NOT (tenant_id = ANY($1::uuid[])) AND status = 'blocked' AND block_reason = 'billing' RETURNING id
       ) INSERT INTO job_events (job_id, from_status, to_status, reason, actor) SELECT id, 'blocked', 'queued', 'funds added', 'billing' FROM u`,
});

/** The tenant $1's ledger, newest first, before the entry $2 (NULL: from the newest), $3 entries, with the balance after each. */
export const LEDGER_PAGE = statement("billing.ledger-page", {
  params: ["uuid", "int8?", "int8"],
  columns: {
    id: "text",
    kind: "text",
    amount_cents: "text",
    balance_after: "text",
    description: "text",
    invoice_id: "uuid?",
    created_by: "text",
    created_at: "timestamptz",
  },
  text: `SELECT id::text, kind, amount_cents::text, balance_after::text, description, invoice_id, created_by, created_at FROM (
       SELECT l.*, sum(amount_cents) OVER (ORDER BY id) AS balance_after FROM ledger_entries l WHERE tenant_id = $1
     ) x WHERE $2::bigint IS NULL OR id < $2::bigint ORDER BY id DESC LIMIT $3`,
});

/** The tenant $1's billed usage per GPU type between $2 (excluded) and $3. */
export const USAGE_BY_GPU_TYPE = statement("billing.usage-by-gpu-type", {
  params: ["uuid", "timestamptz", "timestamptz"],
  columns: { gpu_type: "text", gpu_seconds: "text", amount_cents: "text" },
  text: `SELECT gpu_type, sum(gpu_seconds)::text AS gpu_seconds, sum(amount_cents)::text AS amount_cents FROM usage_events
      WHERE tenant_id = $1 AND ended_at > $2 AND ended_at <= $3 GROUP BY gpu_type ORDER BY 3 DESC`,
});

/**
 * What running work costs and has not billed yet, per tenant, as of $3 (NULL: now): each job's
 * current run and each live replica outside a reservation, each running pod, and each node a
 * reservation holds now, from where its billing stopped, at the rate in force then. The meter
 * bills exactly this when it next writes a segment (lib/billing/meter.ts): the "accruing" part of
 * this month's money (lib/billing/month-spend.ts). $1 one tenant, $2 one job (NULL: all).
 */
export const RUNNING_COST = statement("billing.running-cost", {
  params: ["uuid?", "uuid?", "timestamptz?"],
  columns: { tenant_id: "uuid", c: "text", per_hour: "text" },
  text: `WITH at AS (SELECT COALESCE($3::timestamptz, now()) AS t), running AS (
       SELECT j.tenant_id, j.gpu_type, j.gpu_count, GREATEST(j.started_at, COALESCE(u.last_end, j.started_at)) AS billed_to, at.t AS until
         FROM at, jobs j LEFT JOIN LATERAL (SELECT max(ended_at) AS last_end FROM usage_events WHERE job_id = j.id AND attempt = j.attempts) u ON true
        WHERE j.status = 'running' AND ($1::uuid IS NULL OR j.tenant_id = $1::uuid) AND ($2::uuid IS NULL OR j.id = $2::uuid)
          AND NOT EXISTS (SELECT 1 FROM job_placements p WHERE p.job_id = j.id AND p.attempt = j.attempts AND p.reservation_id IS NOT NULL)
       UNION ALL
       SELECT x.tenant_id, x.gpu_type, x.gpu_count, GREATEST(x.started_at, COALESCE(u.last_end, x.started_at)), at.t
         FROM at, endpoint_replicas x LEFT JOIN LATERAL (SELECT max(ended_at) AS last_end FROM usage_events WHERE replica_id = x.id) u ON true
        WHERE x.status <> 'stopped' AND x.reservation_id IS NULL AND ($1::uuid IS NULL OR x.tenant_id = $1::uuid) AND $2::uuid IS NULL
       UNION ALL
       SELECT p.tenant_id, pl.gpu_type, cardinality(pl.gpu_ids), GREATEST(pl.running_at, COALESCE(u.last_end, pl.running_at)), at.t
         FROM at, pod_placements pl JOIN pods p ON p.id = pl.pod_id
         LEFT JOIN LATERAL (SELECT max(ended_at) AS last_end FROM usage_events WHERE pod_id = pl.pod_id AND attempt = pl.attempt) u ON true
        WHERE pl.ended_at IS NULL AND pl.running_at IS NOT NULL AND ($1::uuid IS NULL OR p.tenant_id = $1::uuid) AND $2::uuid IS NULL
       UNION ALL
       SELECT h.tenant_id, rv.gpu_type, h.gpu_count, GREATEST(h.starts_at, COALESCE(u.last_end, h.starts_at)), LEAST(at.t, h.ends_at)
         FROM at, reservation_nodes h JOIN reservations rv ON rv.id = h.reservation_id
         LEFT JOIN LATERAL (SELECT max(ended_at) AS last_end FROM usage_events WHERE reservation_node_id = h.id) u ON true
        WHERE h.live AND h.closed_at IS NULL AND h.starts_at < at.t AND ($1::uuid IS NULL OR h.tenant_id = $1::uuid) AND $2::uuid IS NULL
          -- a reservation paid up front costs nothing more as it runs
          AND rv.prepaid_cents IS NULL
     )
     -- as bill_segment computes a segment: GPU-seconds rounded, then the amount at the rate in force when the segment starts
     SELECT w.tenant_id,
            COALESCE(sum(round(round(GREATEST(extract(epoch FROM date_trunc('milliseconds', w.until) - w.billed_to), 0) * w.gpu_count)
                               * COALESCE(seg.cents_per_hour, 0) / 3600.0)), 0)::text AS c,
            COALESCE(sum(w.gpu_count * COALESCE(cur.cents_per_hour, 0)) FILTER (WHERE w.until >= at.t), 0)::text AS per_hour
       FROM at, running w
       LEFT JOIN LATERAL (SELECT cents_per_hour FROM gpu_rates WHERE gpu_type IN (w.gpu_type, '*') AND effective_from <= w.billed_to
                          ORDER BY (gpu_type = '*'), effective_from DESC LIMIT 1) seg ON true
       LEFT JOIN LATERAL (SELECT cents_per_hour FROM gpu_rates WHERE gpu_type IN (w.gpu_type, '*') AND effective_from <= at.t
                          ORDER BY (gpu_type = '*'), effective_from DESC LIMIT 1) cur ON true
      GROUP BY w.tenant_id`,
});

/** Usage billed (segments the meter wrote, invoiced or not) that ended after $1 and by $2, per tenant; $3 one tenant (NULL: all). */
export const BILLED_BY_TENANT = statement("billing.billed-by-tenant", {
  params: ["timestamptz", "timestamptz", "uuid?"],
  columns: { tenant_id: "uuid", c: "text" },
  text: `SELECT tenant_id, sum(amount_cents)::text AS c FROM usage_events
      WHERE ended_at > $1 AND ended_at <= $2 AND ($3::uuid IS NULL OR tenant_id = $3::uuid) GROUP BY tenant_id`,
});

/** What the job $1's billed segments of every attempt cost. */
export const JOB_BILLED_CENTS = statement("billing.job-billed-cents", {
  params: ["uuid"],
  columns: { c: "text" },
  text: `SELECT COALESCE(sum(amount_cents), 0)::text AS c FROM usage_events WHERE job_id = $1`,
});

/** Invoice figures for operators: paid, outstanding, and their counts. */
export const BILLING_SUMMARY = statement("billing.summary", {
  params: [],
  columns: { revenue: "text", outstanding: "text", paid: "int4", pending: "int4" },
  text: `SELECT (SELECT COALESCE(sum(amount_cents), 0) FROM invoices WHERE status = 'paid')::text AS revenue,
            (SELECT COALESCE(sum(amount_cents), 0) FROM invoices WHERE status = 'pending')::text AS outstanding,
            (SELECT count(*) FROM invoices WHERE status = 'paid')::int AS paid,
            (SELECT count(*) FROM invoices WHERE status = 'pending')::int AS pending`,
});

/** Billed usage per calendar month (UTC) and GPU type, the last $1 months, of the tenant $2 (NULL: all). */
export const USAGE_BY_MONTH = statement("billing.usage-by-month", {
  params: ["int4", "uuid?"],
  columns: { month: "timestamptz", gpu_type: "text", cents: "text" },
  text: `SELECT date_trunc('month', ended_at) AS month, gpu_type, sum(amount_cents)::text AS cents FROM usage_events
      WHERE ended_at >= date_trunc('month', now()) - make_interval(months => $1::int - 1) AND ($2::uuid IS NULL OR tenant_id = $2::uuid)
      GROUP BY 1, 2 ORDER BY 1`,
});

/** Per tenant: outstanding invoices and prepaid balance (this month's money comes from month-spend). */
export const TENANT_BILLING_TABLE = statement("billing.tenant-table", {
  params: [],
  columns: { id: "uuid", name: "text", billing_mode: "text", outstanding: "text", balance: "text" },
  text: `SELECT t.id, t.name, t.billing_mode,
            COALESCE((SELECT sum(amount_cents) FROM invoices i WHERE i.tenant_id = t.id AND i.status = 'pending'), 0)::text AS outstanding,
            COALESCE((SELECT sum(amount_cents) FROM ledger_entries l WHERE l.tenant_id = t.id), 0)::text AS balance
       FROM tenants t ORDER BY t.name`,
});

/** Records a Stripe event ($1, type $2) as being processed; nothing when it was seen before. */
export const RECORD_STRIPE_EVENT = statement("billing.record-stripe-event", {
  params: ["text", "text"],
  columns: {},
  text: `INSERT INTO stripe_events (id, type, outcome) VALUES ($1, $2, 'processing') ON CONFLICT (id) DO NOTHING`,
});

/** What became of the Stripe event $2. */
export const SET_STRIPE_EVENT_OUTCOME = statement("billing.set-stripe-event-outcome", {
  params: ["text", "text"],
  columns: {},
  text: `UPDATE stripe_events SET outcome = $1 WHERE id = $2`,
});

/** Locks the invoice whose id reads $1 (from Stripe's metadata, not known to be a uuid). */
export const LOCK_INVOICE_FOR_PAYMENT = statement("billing.lock-invoice-for-payment", {
  params: ["text"],
  columns: { status: "text", tenant_id: "uuid", number: "int4", payment_method: "text?", payment_reference: "text?" },
  text: `
          SELECT status, tenant_id, number, payment_method, payment_reference FROM invoices WHERE id::text = $1 FOR UPDATE`,
});

/** A critical operator alert ($1 dedupe key, $2 invoice id, $3 its label, $4 message, $5 details): a card payment arrived for an invoice already paid or void. */
export const FIRE_UNEXPECTED_PAYMENT = statement("billing.fire-unexpected-payment", {
  params: ["text", "text", "text", "text", "jsonb"],
  columns: { id: "text" },
  text: `
    INSERT INTO alert_events (rule_type, dedupe_key, subject_type, subject_id, subject_label, severity, message, details)
    VALUES ('unexpected_payment', $1, 'invoice', $2, $3, 'critical',
            $4,
            $5::jsonb)
    ON CONFLICT (dedupe_key) WHERE status = 'firing' DO NOTHING RETURNING id::text`,
});
