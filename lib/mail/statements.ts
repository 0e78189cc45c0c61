import { statement } from "@/lib/db/statement";

// Account mail's statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts.

/** Account mail of the kinds $2 queued to the address $1 in the last hour. */
export const RECENT_ACCOUNT_MAIL = statement("mail.recent-account-mail", {
  params: ["text", "text[]"],
  columns: { n: "int4" },
  text: `SELECT count(*)::int AS n FROM notifications
          WHERE kind = 'account' AND target = $1 AND mail_kind = ANY($2::text[]) AND created_at > now() - interval '1 hour'`,
});
