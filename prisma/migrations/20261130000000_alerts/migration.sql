-- Alerts: rules, the events they raise (one firing event per rule and subject), the notification
-- outbox, and automatic remediations counted against a fleet-wide cap.

CREATE TABLE "alert_rules" (
    "id"             UUID NOT NULL DEFAULT gen_random_uuid(),
    "name"           TEXT NOT NULL,
    "rule_type"      TEXT NOT NULL,
    "cluster_id"     UUID,
    "threshold"      DOUBLE PRECISION NOT NULL DEFAULT 0,
    "window_s"       INTEGER NOT NULL DEFAULT 0,
    "occurrences"    INTEGER NOT NULL DEFAULT 1,
    "severity"       TEXT NOT NULL DEFAULT 'warning',
    "enabled"        BOOLEAN NOT NULL DEFAULT true,
    "notify"         BOOLEAN NOT NULL DEFAULT true,
    "auto_remediate" BOOLEAN NOT NULL DEFAULT false,
    "created_at"     TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at"     TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "alert_rules_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "alert_rules_type_check" CHECK ("rule_type" IN ('idle_gpu', 'idle_allocation', 'gpu_temperature', 'node_unreachable', 'gpu_xid', 'sla_breach')),
    CONSTRAINT "alert_rules_severity_check" CHECK ("severity" IN ('info', 'warning', 'critical')),
    CONSTRAINT "alert_rules_name_check" CHECK (length("name") BETWEEN 1 AND 120),
    CONSTRAINT "alert_rules_threshold_check" CHECK ("threshold" >= 0),
    CONSTRAINT "alert_rules_window_check" CHECK ("window_s" BETWEEN 0 AND 604800),
    CONSTRAINT "alert_rules_occurrences_check" CHECK ("occurrences" BETWEEN 1 AND 10080),
    -- only hardware signals may take a node out of service on their own
    CONSTRAINT "alert_rules_remediate_check" CHECK (NOT "auto_remediate" OR "rule_type" IN ('gpu_xid', 'gpu_temperature'))
);
CREATE UNIQUE INDEX "alert_rules_name_key" ON "alert_rules"("name");
ALTER TABLE "alert_rules" ADD CONSTRAINT "alert_rules_cluster_id_fkey" FOREIGN KEY ("cluster_id") REFERENCES "clusters"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "alert_events" (
    "id"              UUID NOT NULL DEFAULT gen_random_uuid(),
    "rule_id"         UUID,
    "rule_type"       TEXT NOT NULL,
    "dedupe_key"      TEXT NOT NULL,
    "subject_type"    TEXT NOT NULL,
    "subject_id"      TEXT NOT NULL,
    "subject_label"   TEXT NOT NULL,
    "cluster_id"      UUID,
    "node_id"         UUID,
    "tenant_id"       UUID,
    "severity"        TEXT NOT NULL,
    "status"          TEXT NOT NULL DEFAULT 'firing',
    "message"         TEXT NOT NULL,
    "details"         JSONB NOT NULL DEFAULT '{}',
    "fired_at"        TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at"    TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at"     TIMESTAMPTZ(3),
    "acknowledged_at" TIMESTAMPTZ(3),
    "acknowledged_by" TEXT,
    CONSTRAINT "alert_events_pkey" PRIMARY KEY ("id"),
    -- rule events carry their rule's type; the platform's own (remediation capped, job moved) have no rule
    CONSTRAINT "alert_events_type_check" CHECK ("rule_type" IN ('idle_gpu', 'idle_allocation', 'gpu_temperature', 'node_unreachable', 'gpu_xid', 'sla_breach', 'remediation_capped', 'job_moved')),
    CONSTRAINT "alert_events_rule_check" CHECK (("rule_id" IS NULL) = ("rule_type" IN ('remediation_capped', 'job_moved'))),
    CONSTRAINT "alert_events_subject_check" CHECK ("subject_type" IN ('cluster', 'node', 'gpu', 'job', 'endpoint')),
    CONSTRAINT "alert_events_severity_check" CHECK ("severity" IN ('info', 'warning', 'critical')),
    CONSTRAINT "alert_events_status_check" CHECK ("status" IN ('firing', 'resolved')),
    CONSTRAINT "alert_events_resolved_check" CHECK (("status" = 'resolved') = ("resolved_at" IS NOT NULL)),
    CONSTRAINT "alert_events_ack_check" CHECK (("acknowledged_at" IS NULL) = ("acknowledged_by" IS NULL))
);
-- the dedupe promise: at most one firing event per rule and subject
CREATE UNIQUE INDEX "alert_events_firing_key" ON "alert_events"("dedupe_key") WHERE "status" = 'firing';
CREATE INDEX "alert_events_status_fired_at_idx" ON "alert_events"("status", "fired_at");
CREATE INDEX "alert_events_fired_at_idx" ON "alert_events"("fired_at");
CREATE INDEX "alert_events_tenant_id_idx" ON "alert_events"("tenant_id", "fired_at");
CREATE INDEX "alert_events_rule_id_idx" ON "alert_events"("rule_id");
CREATE INDEX "alert_events_node_id_idx" ON "alert_events"("node_id");
ALTER TABLE "alert_events" ADD CONSTRAINT "alert_events_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "alert_rules"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "alert_events" ADD CONSTRAINT "alert_events_cluster_id_fkey" FOREIGN KEY ("cluster_id") REFERENCES "clusters"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "alert_events" ADD CONSTRAINT "alert_events_node_id_fkey" FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "alert_events" ADD CONSTRAINT "alert_events_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "notifications" (
    "id"              UUID NOT NULL DEFAULT gen_random_uuid(),
    "alert_event_id"  UUID NOT NULL,
    "kind"            TEXT NOT NULL,
    "channel"         TEXT NOT NULL,
    "target"          TEXT NOT NULL,
    "subject"         TEXT NOT NULL,
    "body"            TEXT NOT NULL,
    "status"          TEXT NOT NULL DEFAULT 'pending',
    "attempts"        INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_error"      TEXT,
    "sent_at"         TIMESTAMPTZ(3),
    "created_at"      TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "notifications_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "notifications_kind_check" CHECK ("kind" IN ('firing', 'resolved')),
    -- console: no channel was configured; the operator plane is where it is read
    CONSTRAINT "notifications_channel_check" CHECK ("channel" IN ('email', 'webhook', 'console')),
    CONSTRAINT "notifications_status_check" CHECK ("status" IN ('pending', 'sent', 'failed')),
    CONSTRAINT "notifications_sent_check" CHECK (("status" = 'sent') = ("sent_at" IS NOT NULL)),
    CONSTRAINT "notifications_attempts_check" CHECK ("attempts" >= 0)
);
-- each event is announced once per channel, however many evaluators race
CREATE UNIQUE INDEX "notifications_alert_event_id_kind_channel_key" ON "notifications"("alert_event_id", "kind", "channel");
CREATE INDEX "notifications_due_idx" ON "notifications"("next_attempt_at") WHERE "status" = 'pending';
CREATE INDEX "notifications_created_at_idx" ON "notifications"("created_at");
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_alert_event_id_fkey" FOREIGN KEY ("alert_event_id") REFERENCES "alert_events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "remediations" (
    "id"             UUID NOT NULL DEFAULT gen_random_uuid(),
    "node_id"        UUID NOT NULL,
    "alert_event_id" UUID,
    "cause"          TEXT NOT NULL,
    "action"         TEXT NOT NULL DEFAULT 'quarantine',
    "outcome"        TEXT NOT NULL,
    "jobs_requeued"  INTEGER NOT NULL DEFAULT 0,
    "details"        JSONB NOT NULL DEFAULT '{}',
    "created_at"     TIMESTAMPTZ(3) NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT "remediations_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "remediations_action_check" CHECK ("action" IN ('quarantine')),
    -- quarantined: done; capped: the cap was reached and a human was called instead
    CONSTRAINT "remediations_outcome_check" CHECK ("outcome" IN ('quarantined', 'capped')),
    CONSTRAINT "remediations_jobs_check" CHECK ("jobs_requeued" >= 0 AND ("outcome" = 'quarantined' OR "jobs_requeued" = 0))
);
CREATE INDEX "remediations_applied_idx" ON "remediations"("created_at") WHERE "outcome" = 'quarantined';
CREATE INDEX "remediations_node_id_idx" ON "remediations"("node_id", "created_at");
CREATE INDEX "remediations_created_at_idx" ON "remediations"("created_at");
ALTER TABLE "remediations" ADD CONSTRAINT "remediations_node_id_fkey" FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "remediations" ADD CONSTRAINT "remediations_alert_event_id_fkey" FOREIGN KEY ("alert_event_id") REFERENCES "alert_events"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Sensible defaults an operator tunes from the rules editor.
INSERT INTO "alert_rules" ("name", "rule_type", "threshold", "window_s", "occurrences", "severity", "notify", "auto_remediate") VALUES
  ('Fatal XID on a GPU',                     'gpu_xid',          0,   0,    1, 'critical', true,  true),
  ('GPU overheating repeatedly',             'gpu_temperature',  90,  600,  3, 'critical', true,  true),
  ('Node unreachable',                       'node_unreachable', 0,   120,  1, 'critical', true,  false),
  ('Idle capacity above 40 %',               'idle_gpu',         40,  1800, 1, 'info',     false, false),
  ('Allocated GPUs idle (under 5 % for 30 min)', 'idle_allocation', 5, 1800, 1, 'warning',  true,  false),
  ('Inference SLA breached',                 'sla_breach',       0,   900,  1, 'critical', true,  false);
