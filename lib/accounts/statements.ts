import { statement } from "@/lib/db/statement";

// Accounts' raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts.

/** Marks the token with hash $1 and purpose $2 used, when it is unused and unexpired; its user. */
export const CONSUME_ACCOUNT_TOKEN = statement("accounts.consume-token", {
  params: ["text", "text[]"],
  columns: { user_id: "uuid" },
  text: `UPDATE account_tokens SET used_at = now()
          WHERE token_hash = $1 AND purpose = ANY($2::text[]) AND used_at IS NULL AND expires_at > now()
      RETURNING user_id`,
});

/** The user $1's unused tokens of the purposes $2, marked used. */
export const RETIRE_ACCOUNT_TOKENS = statement("accounts.retire-tokens", {
  params: ["uuid", "text[]"],
  columns: {},
  text: `UPDATE account_tokens SET used_at = now() WHERE user_id = $1 AND purpose = ANY($2::text[]) AND used_at IS NULL`,
});

/** Unverified sign-ups past their expiry (at most $1), locked, skipping those another transaction holds. */
export const EXPIRED_SIGNUPS = statement("accounts.expired-signups", {
  params: ["int4"],
  columns: { id: "uuid", name: "text" },
  text: `SELECT id, name FROM tenants WHERE origin = 'signup' AND signup_expires_at < now()
          ORDER BY signup_expires_at LIMIT $1::int4 FOR UPDATE SKIP LOCKED`,
});

/** Sign-in history older than $1 days, forgotten. */
export const PRUNE_SIGN_IN_EVENTS = statement("accounts.prune-sign-in-events", {
  params: ["int4"],
  columns: {},
  text: `DELETE FROM sign_in_events WHERE created_at < now() - make_interval(days => $1::int)`,
});

/**
 * Counts one request against the fixed window of key $1 ($2 seconds long) and answers the count in
 * the window so far. The window is a row of sign_in_throttles (failures: the count, last_failure_at:
 * when the window began), so every app process shares it and the throttles' sweep forgets it.
 */
export const COUNT_IN_WINDOW = statement("accounts.count-in-window", {
  params: ["text", "float8"],
  columns: { count: "int4" },
  text: `INSERT INTO sign_in_throttles AS t (key, failures, last_failure_at) VALUES ($1, 1, now())
         ON CONFLICT (key) DO UPDATE SET
           failures = CASE WHEN t.last_failure_at IS NULL OR t.last_failure_at <= now() - $2 * interval '1 second' THEN 1 ELSE t.failures + 1 END,
           last_failure_at = CASE WHEN t.last_failure_at IS NULL OR t.last_failure_at <= now() - $2 * interval '1 second' THEN now() ELSE t.last_failure_at END
         RETURNING failures AS count`,
});
