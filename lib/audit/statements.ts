import { statement } from "@/lib/db/statement";

// The audit log's raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts.

/** Deletes up to $2 entries older than $1 days, oldest first. */
export const PRUNE_AUDIT_BATCH = statement("audit.prune-batch", {
  params: ["int4", "int4"],
  columns: {},
  text: `
      DELETE FROM audit_log WHERE id IN (
        SELECT id FROM audit_log WHERE created_at < now() - make_interval(days => $1::int)
        ORDER BY id LIMIT $2::int)`,
});
