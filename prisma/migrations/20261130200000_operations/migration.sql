-- Operations: alerts that come from Prometheus' Alertmanager are kept as external alert events
-- (no rule of ours fired them), one per Alertmanager fingerprint while it fires.
ALTER TABLE "alert_events" DROP CONSTRAINT "alert_events_type_check";
ALTER TABLE "alert_events" ADD CONSTRAINT "alert_events_type_check" CHECK ("rule_type" IN ('idle_gpu', 'idle_allocation', 'gpu_temperature', 'node_unreachable', 'gpu_xid', 'sla_breach', 'remediation_capped', 'job_moved', 'unexpected_payment', 'external'));
ALTER TABLE "alert_events" DROP CONSTRAINT "alert_events_rule_check";
ALTER TABLE "alert_events" ADD CONSTRAINT "alert_events_rule_check" CHECK (("rule_id" IS NULL) = ("rule_type" IN ('remediation_capped', 'job_moved', 'unexpected_payment', 'external')));
