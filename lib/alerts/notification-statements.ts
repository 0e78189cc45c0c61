import { statement } from "@/lib/db/statement";

// The notification outbox's statements (lib/db/statement.ts), checked against the migrated
// database by tests/integration/sql-statements.test.ts.

/** Operators who receive email when no address is configured. */
export const OPERATOR_EMAILS = statement("alerts.operator-emails", {
  params: [],
  columns: { email: "text" },
  text: `SELECT email FROM users WHERE role = 'operator' AND disabled_at IS NULL ORDER BY email`,
});

/** The events ($1) a notification speaks of, with their rules' names. */
export const EVENTS_TO_NOTIFY = statement("alerts.events-to-notify", {
  params: ["uuid[]"],
  columns: {
    id: "uuid",
    severity: "text",
    rule_name: "text?",
    rule_type: "text",
    subject_label: "text",
    message: "text",
    fired_at: "timestamptz",
    resolved_at: "timestamptz?",
    ruleId: "uuid?",
    ruleType: "text",
    clusterId: "uuid?",
    nodeId: "uuid?",
    subjectType: "text",
    subjectId: "text",
  },
  text: `SELECT e.id, e.severity, r.name AS rule_name, e.rule_type, e.subject_label, e.message, e.fired_at, e.resolved_at,
            e.rule_id AS "ruleId", e.rule_type AS "ruleType", e.cluster_id AS "clusterId", e.node_id AS "nodeId", e.subject_type AS "subjectType", e.subject_id AS "subjectId"
       FROM alert_events e LEFT JOIN alert_rules r ON r.id = e.rule_id WHERE e.id = ANY($1::uuid[])`,
});

/** Claims up to $1 due notifications under a lease of $2 seconds (parallel deliverers skip each other's). */
export const CLAIM_DUE_NOTIFICATIONS = statement("alerts.claim-due-notifications", {
  params: ["int8", "int4"],
  columns: {
    id: "uuid",
    alert_event_id: "uuid?",
    demo_request_id: "uuid?",
    kind: "text",
    channel: "text",
    target: "text",
    subject: "text",
    body: "text",
    attempts: "int4",
    severity: "text?",
    rule_type: "text?",
    subject_label: "text?",
    mail_kind: "text?",
    body_html: "text?",
    secret_ciphertext: "text?",
  },
  text: `WITH due AS (
       SELECT id FROM notifications WHERE status = 'pending' AND next_attempt_at <= now()
        ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED
     )
     UPDATE notifications n SET attempts = n.attempts + 1, next_attempt_at = now() + make_interval(secs => $2::int)
       FROM due
      WHERE n.id = due.id
     RETURNING n.id, n.alert_event_id, n.demo_request_id, n.kind, n.channel, n.target, n.subject, n.body, n.attempts,
               n.mail_kind, n.body_html, n.secret_ciphertext,
               (SELECT severity FROM alert_events e WHERE e.id = n.alert_event_id) AS severity,
               (SELECT rule_type FROM alert_events e WHERE e.id = n.alert_event_id) AS rule_type,
               (SELECT subject_label FROM alert_events e WHERE e.id = n.alert_event_id) AS subject_label`,
});

export const MARK_NOTIFICATION_SENT = statement("alerts.mark-notification-sent", {
  params: ["uuid"],
  columns: {},
  // account mail's sealed bodies (with their links) are kept only until delivered
  text: `UPDATE notifications SET status = 'sent', sent_at = now(), last_error = NULL, secret_ciphertext = NULL WHERE id = $1`,
});

/** A failed delivery: $2 pending (retried after $4 seconds) or failed, with its error $3. */
export const MARK_NOTIFICATION_FAILED = statement("alerts.mark-notification-failed", {
  params: ["uuid", "text", "text", "int4"],
  columns: {},
  text: `UPDATE notifications SET status = $2, last_error = $3, next_attempt_at = now() + make_interval(secs => $4::int) WHERE id = $1`,
});
