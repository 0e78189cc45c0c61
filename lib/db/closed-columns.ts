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
import { LEASE_PURPOSES } from "@/lib/fleet/node-lease";
import { ATTESTATION_MODES, TPM_KINDS, VERDICT_RESULTS, WIPE_RESULTS } from "@/lib/attestation/vocabulary";
import {
  STEP_STATUSES as WORKFLOW_STEP_STATUSES,
  WORKFLOW_KINDS,
  WORKFLOW_STATUSES,
  WORKFLOW_TRIGGERS,
} from "@/lib/fleet/workflow-vocabulary";
import { CLUSTER_KINDS } from "@/lib/fleet/cluster-schemas";
import { MIRRORED_STATUSES } from "@/lib/slurm/node-state";
import { BLOCK_REASONS, JOB_STATUSES } from "@/lib/jobs/job-lifecycle";
import { DEMO_REQUEST_STATUSES } from "@/lib/marketing/schemas";
import { LOOP_ON_EXHAUSTED, PIPELINE_EVENT_KINDS, PIPELINE_STATUSES, STEP_KINDS, STEP_STATUSES } from "@/lib/pipelines/schemas";
import { POD_STATUSES } from "@/lib/pods/pod-lifecycle";
import { ATTEMPT_OUTCOMES, INSTANCE_STATUSES, PROVIDERS } from "@/lib/providers/vocabulary";
import { RESERVATION_EVENT_KINDS, RESERVATION_STATUSES } from "@/lib/reservations/reservation-lifecycle";
import { BILLING_MODES, TENANT_ORIGINS, TENANT_STATUSES } from "@/lib/tenants/schemas";
import { SIGN_IN_METHODS, SIGN_IN_OUTCOMES, TOKEN_PURPOSES } from "@/lib/accounts/vocabulary";
import { CARD_DEPOSIT_STATUSES } from "@/lib/billing/card-deposit-lifecycle";
import { MAIL_KINDS } from "@/lib/mail/templates";
import { TENANT_ROLES, USER_ROLES } from "@/lib/users/schemas";
import { LOG_STREAMS } from "@/lib/workload-logs/schemas";
import { REDFISH_FAILURES } from "@/lib/redfish/errors";
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
  "provider_offers.provider": PROVIDERS,
  "provider_refreshes.provider": PROVIDERS,
  "provider_gpu_mappings.provider": PROVIDERS,
  "provider_instances.provider": PROVIDERS,
  "provider_instances.status": INSTANCE_STATUSES,
  "provider_backoffs.provider": PROVIDERS,
  "burst_attempts.outcome": ATTEMPT_OUTCOMES,
  "usage_events.provider": PROVIDERS,
  "tenants.origin": TENANT_ORIGINS,
  "account_tokens.purpose": TOKEN_PURPOSES,
  "sign_in_events.outcome": SIGN_IN_OUTCOMES,
  "sign_in_events.method": SIGN_IN_METHODS,
  "card_deposits.status": CARD_DEPOSIT_STATUSES,
  "notifications.mail_kind": MAIL_KINDS,
  "node_leases.purpose": LEASE_PURPOSES,
  "node_workflows.kind": WORKFLOW_KINDS,
  "node_workflows.status": WORKFLOW_STATUSES,
  "node_workflows.trigger": WORKFLOW_TRIGGERS,
  "node_workflow_steps.status": WORKFLOW_STEP_STATUSES,
  "node_bmcs.last_error_kind": REDFISH_FAILURES,
  "clusters.kind": CLUSTER_KINDS,
  "slurm_nodes.mirrored_status": MIRRORED_STATUSES,
  "cluster_handover_settings.attestation": ATTESTATION_MODES,
  "node_wipe_reports.result": WIPE_RESULTS,
  "attestation_identities.tpm_kind": TPM_KINDS,
  "attestations.result": VERDICT_RESULTS,
  "attestations.tpm_kind": TPM_KINDS,
  "service_accounts.role": SERVICE_ACCOUNT_ROLES,
  "tenant_secrets.usable_by": TENANT_ROLES,
} as const satisfies Record<string, readonly string[]>;
