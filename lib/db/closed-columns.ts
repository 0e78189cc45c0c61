import { SETTING_KEYS } from "@/lib/settings/schemas";
import {
  ALERT_EVENT_TYPES,
  ALERT_STATUSES,
  ALERT_SUBJECT_TYPES,
  REMEDIATION_OUTCOMES,
  RULE_TYPES,
  SEVERITIES,
  SILENCE_KINDS,
} from "@/lib/alerts/rule-types";
import { NOTIFICATION_CHANNELS, NOTIFICATION_KINDS, NOTIFICATION_STATUSES } from "@/lib/alerts/schemas";
import { AUDIT_ACTOR_KINDS } from "@/lib/audit/list-audit";
import { INVOICE_STATUSES, PAYMENT_METHODS, USAGE_KINDS } from "@/lib/billing/schemas";
import { SCALE_OUTCOMES, AUTOSCALE_METRICS } from "@/lib/endpoints/autoscaler";
import { ENDPOINT_STATUSES, REPLICA_STATUSES } from "@/lib/endpoints/endpoint-lifecycle";
import { GPU_STATUSES, NODE_STATUSES } from "@/lib/fleet/node-lifecycle";
import { BLOCK_REASONS, JOB_STATUSES } from "@/lib/jobs/job-lifecycle";
import { DEMO_REQUEST_STATUSES } from "@/lib/marketing/schemas";
import { LOOP_ON_EXHAUSTED, PIPELINE_EVENT_KINDS, PIPELINE_STATUSES, STEP_KINDS, STEP_STATUSES } from "@/lib/pipelines/schemas";
import { POD_STATUSES } from "@/lib/pods/pod-lifecycle";
import { RESERVATION_EVENT_KINDS, RESERVATION_STATUSES } from "@/lib/reservations/reservation-lifecycle";
import { BILLING_MODES, TENANT_STATUSES } from "@/lib/tenants/schemas";
import { TENANT_ROLES, USER_ROLES } from "@/lib/users/schemas";
import { LOG_STREAMS } from "@/lib/workload-logs/schemas";
import { SERVICE_ACCOUNT_ROLES } from "@/lib/service-accounts/schemas";

// Every text column whose values are a closed list, with the constant the code uses for it. The
// migrations hold the same lists in CHECK constraints; tests/integration/vocabulary-drift.test.ts
// compares the two both ways (each list here against its CHECK, and every CHECK-listed column is
// here), so a value added on one side only fails the suite. Values read back are narrowed with
// `oneOf` (lib/vocabulary.ts), never cast.

export const CLOSED_COLUMNS = {
  "tenants.status": TENANT_STATUSES,
  "tenants.billing_mode": BILLING_MODES,
  "users.role": USER_ROLES,
  "api_keys.tenant_role": TENANT_ROLES,
  "audit_log.actor_kind": AUDIT_ACTOR_KINDS,
  "nodes.status": NODE_STATUSES,
  "nodes.status_before_offline": NODE_STATUSES.filter((s) => s !== "offline"),
  "gpus.status": GPU_STATUSES,
  "jobs.status": JOB_STATUSES,
  "jobs.block_reason": BLOCK_REASONS,
  "pipelines.status": PIPELINE_STATUSES,
  "pipeline_steps.status": STEP_STATUSES,
  "pipeline_steps.kind": STEP_KINDS,
  "pipeline_steps.loop_on_exhausted": LOOP_ON_EXHAUSTED,
  "pipeline_events.kind": PIPELINE_EVENT_KINDS,
  "pipeline_step_outputs.source": STEP_KINDS,
  "alert_rules.rule_type": RULE_TYPES,
  "alert_rules.severity": SEVERITIES,
  "alert_events.rule_type": ALERT_EVENT_TYPES,
  "alert_events.severity": SEVERITIES,
  "alert_events.status": ALERT_STATUSES,
  "alert_events.subject_type": ALERT_SUBJECT_TYPES,
  "alert_silences.kind": SILENCE_KINDS,
  "notifications.status": NOTIFICATION_STATUSES,
  "notifications.kind": NOTIFICATION_KINDS,
  "notifications.channel": NOTIFICATION_CHANNELS,
  "remediations.outcome": REMEDIATION_OUTCOMES,
  "invoices.status": INVOICE_STATUSES,
  "invoices.payment_method": PAYMENT_METHODS,
  "usage_events.kind": USAGE_KINDS,
  "usage_events.settlement": BILLING_MODES,
  "demo_requests.status": DEMO_REQUEST_STATUSES,
  "endpoints.status": ENDPOINT_STATUSES,
  "endpoints.autoscale_metric": AUTOSCALE_METRICS,
  "endpoint_replicas.status": REPLICA_STATUSES,
  "endpoint_scaling_decisions.outcome": SCALE_OUTCOMES,
  "workload_logs.stream": LOG_STREAMS,
  "platform_settings.key": Object.keys(SETTING_KEYS),
  "reservations.status": RESERVATION_STATUSES,
  "reservation_events.kind": RESERVATION_EVENT_KINDS,
  "pods.status": POD_STATUSES,
  "service_accounts.role": SERVICE_ACCOUNT_ROLES,
  "tenant_secrets.usable_by": TENANT_ROLES,
} as const satisfies Record<string, readonly string[]>;
