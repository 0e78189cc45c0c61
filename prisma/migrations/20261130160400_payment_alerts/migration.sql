-- Money that arrives for an invoice that is already paid or void (a Checkout session paid after the
-- invoice was settled another way) is never applied silently: it raises a critical operator alert.
ALTER TABLE "alert_events" DROP CONSTRAINT "alert_events_type_check";
ALTER TABLE "alert_events" ADD CONSTRAINT "alert_events_type_check" CHECK ("rule_type" IN ('idle_gpu', 'idle_allocation', 'gpu_temperature', 'node_unreachable', 'gpu_xid', 'sla_breach', 'remediation_capped', 'job_moved', 'unexpected_payment'));
ALTER TABLE "alert_events" DROP CONSTRAINT "alert_events_rule_check";
ALTER TABLE "alert_events" ADD CONSTRAINT "alert_events_rule_check" CHECK (("rule_id" IS NULL) = ("rule_type" IN ('remediation_capped', 'job_moved', 'unexpected_payment')));
ALTER TABLE "alert_events" DROP CONSTRAINT "alert_events_subject_check";
ALTER TABLE "alert_events" ADD CONSTRAINT "alert_events_subject_check" CHECK ("subject_type" IN ('cluster', 'node', 'gpu', 'job', 'endpoint', 'invoice'));
