-- Silences and maintenance windows: for a while, alerts that match are still raised, listed and
-- resolved, and still drive automatic remediation, but nobody is notified about them. A silence
-- starts now (from an alert, or by hand); a maintenance window is scheduled ahead for a cluster or
-- a node. Both expire by themselves and can be ended early. What matches is decided in one place
-- (lib/alerts/silence-match.ts); the database keeps them honest: a bounded period, a reason, and
-- never a silence of everything.
CREATE TABLE "alert_silences" (
    "id"           UUID NOT NULL DEFAULT gen_random_uuid(),
    "kind"         TEXT NOT NULL,
    "rule_id"      UUID,
    "rule_type"    TEXT,
    "cluster_id"   UUID,
    "node_id"      UUID,
    "subject_type" TEXT,
    "subject_id"   TEXT,
    "reason"       TEXT NOT NULL,
    "starts_at"    TIMESTAMPTZ(3) NOT NULL,
    "ends_at"      TIMESTAMPTZ(3) NOT NULL,
    "created_by"   TEXT NOT NULL,
    "created_at"   TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ended_at"     TIMESTAMPTZ(3),
    "ended_by"     TEXT,
    CONSTRAINT "alert_silences_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "alert_silences_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "alert_rules"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "alert_silences_cluster_id_fkey" FOREIGN KEY ("cluster_id") REFERENCES "clusters"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "alert_silences_node_id_fkey" FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "alert_silences_kind_check" CHECK ("kind" IN ('silence', 'maintenance')),
    CONSTRAINT "alert_silences_period_check" CHECK ("ends_at" > "starts_at" AND "ends_at" <= "starts_at" + interval '90 days'),
    CONSTRAINT "alert_silences_reason_check" CHECK (length(btrim("reason")) > 0),
    CONSTRAINT "alert_silences_subject_check" CHECK (("subject_type" IS NULL) = ("subject_id" IS NULL)),
    CONSTRAINT "alert_silences_scope_check" CHECK ("rule_id" IS NOT NULL OR "rule_type" IS NOT NULL OR "cluster_id" IS NOT NULL OR "node_id" IS NOT NULL OR "subject_id" IS NOT NULL),
    CONSTRAINT "alert_silences_maintenance_check" CHECK ("kind" <> 'maintenance' OR "cluster_id" IS NOT NULL OR "node_id" IS NOT NULL),
    CONSTRAINT "alert_silences_ended_check" CHECK (("ended_at" IS NULL) = ("ended_by" IS NULL))
);
CREATE INDEX "alert_silences_ends_at_idx" ON "alert_silences" ("ends_at");
