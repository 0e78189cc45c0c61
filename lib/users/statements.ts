import { statement } from "@/lib/db/statement";

// Users' raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts: the sign-in throttle's counters.

/** The counters of the keys $1–$3 (address, account, pair), created when missing. */
export const ENSURE_THROTTLES = statement("users.ensure-throttles", {
  params: ["text", "text", "text"],
  columns: {},
  text: `INSERT INTO sign_in_throttles (key) VALUES ($1), ($2), ($3) ON CONFLICT (key) DO NOTHING`,
});

/** The counters of the keys $1–$3, locked in key order, so two attempts never wait on each other crosswise. */
export const LOCK_THROTTLES = statement("users.lock-throttles", {
  params: ["text", "text", "text"],
  columns: { key: "text", failures: "int4", blocked_until: "timestamptz?", last_failure_at: "timestamptz?", succeeded_at: "timestamptz?" },
  text: `
    SELECT key, failures, blocked_until, last_failure_at, succeeded_at FROM sign_in_throttles
     WHERE key IN ($1, $2, $3) ORDER BY key FOR UPDATE`,
});

/** The database's clock now (not the transaction's start): the throttle's decisions use one clock. */
export const CLOCK_NOW = statement("users.clock-now", {
  params: [],
  columns: { now: "timestamptz" },
  text: `SELECT clock_timestamp() AS now`,
});

/** The counter $4's new state. */
export const WRITE_THROTTLE = statement("users.write-throttle", {
  params: ["int4", "timestamptz?", "timestamptz?", "text"],
  columns: {},
  text: `UPDATE sign_in_throttles SET failures = $1, blocked_until = $2, last_failure_at = $3 WHERE key = $4`,
});

/** The counter $5's new state, and the sign-in ($4) that vouches for its pair. */
export const WRITE_THROTTLE_SUCCEEDED = statement("users.write-throttle-succeeded", {
  params: ["int4", "timestamptz?", "timestamptz?", "timestamptz", "text"],
  columns: {},
  text: `UPDATE sign_in_throttles SET failures = $1, blocked_until = $2, last_failure_at = $3, succeeded_at = $4 WHERE key = $5`,
});

/** Counters with nothing left to remember: no back-off, no recent failure, no pair memory younger than $1 seconds. */
export const PRUNE_THROTTLES = statement("users.prune-throttles", {
  params: ["float8"],
  columns: {},
  text: `
    DELETE FROM sign_in_throttles
     WHERE (blocked_until IS NULL OR blocked_until < now()) AND (last_failure_at IS NULL OR last_failure_at < now() - interval '1 day')
       AND (succeeded_at IS NULL OR succeeded_at < now() - $1 * interval '1 second')`,
});
