import { statement } from "@/lib/db/statement";

// Two-factor sign-in's raw statements (lib/db/statement.ts), checked against the migrated database
// by tests/integration/sql-statements.test.ts.

/** Records the time step $2 as the user $1's last accepted one, only if it is after the last; the user when it was. */
export const USE_TOTP_STEP = statement("accounts.use-totp-step", {
  params: ["uuid", "int8"],
  columns: { id: "uuid" },
  text: `UPDATE users SET totp_last_step = $2
          WHERE id = $1 AND totp_enabled_at IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < $2)
      RETURNING id`,
});

/** Uses the user $1's unused recovery code with hash $2; the code's row when there was one. */
export const USE_RECOVERY_CODE = statement("accounts.use-recovery-code", {
  params: ["uuid", "text"],
  columns: { id: "int8" },
  text: `UPDATE user_recovery_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING id`,
});
