import { z } from "zod";
import { listParamsShape } from "@/lib/http/list-params";
import { paginationQuery } from "@/lib/http/pagination";
import { ALERT_EVENT_TYPES, ALERT_STATUSES, REMEDIATION_OUTCOMES, RULE_TYPE_SPECS, RULE_TYPES, SEVERITIES } from "./rule-types";

const name = z.string().trim().min(1, "Name is required").max(120, "At most 120 characters");
const threshold = z.number().min(0).max(100_000);
const windowS = z.number().int("Must be a whole number of seconds").min(0).max(604_800);
const occurrences = z.number().int("Must be a whole number").min(1).max(10_080);

const knobsDoc = RULE_TYPES.map((t) => `${t}: ${RULE_TYPE_SPECS[t].description}`).join("\n");

export const createRuleBody = z
  .strictObject({
    name,
    rule_type: z.enum(RULE_TYPES),
    cluster_id: z.uuid("Must be a cluster id").nullish(),
    threshold: threshold.optional(),
    window_s: windowS.optional(),
    occurrences: occurrences.optional(),
    severity: z.enum(SEVERITIES).default("warning"),
    enabled: z.boolean().default(true),
    notify: z.boolean().default(true),
    auto_remediate: z.boolean().default(false),
  })
  .meta({
    id: "CreateAlertRule",
    description: `What threshold, window_s and occurrences mean depends on rule_type; omitted ones take the type's defaults.\n${knobsDoc}`,
    example: {
      name: "H100 overheating",
      rule_type: "gpu_temperature",
      threshold: 88,
      window_s: 600,
      occurrences: 3,
      severity: "critical",
      auto_remediate: true,
    },
  });

export const updateRuleBody = z
  .strictObject({
    name: name.optional(),
    cluster_id: z.uuid("Must be a cluster id").nullish(),
    threshold: threshold.optional(),
    window_s: windowS.optional(),
    occurrences: occurrences.optional(),
    severity: z.enum(SEVERITIES).optional(),
    enabled: z.boolean().optional(),
    notify: z.boolean().optional(),
    auto_remediate: z.boolean().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: "Send at least one field to change" })
  .meta({
    id: "UpdateAlertRule",
    description: "A rule's type cannot change; create another rule instead.",
    example: { threshold: 85, enabled: true },
  });

export type CreateRuleInput = z.output<typeof createRuleBody>;
export type UpdateRuleInput = z.output<typeof updateRuleBody>;

export const ruleJsonSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    rule_type: z.enum(RULE_TYPES),
    cluster_id: z.string().nullable(),
    threshold: z.number(),
    window_s: z.number().int(),
    occurrences: z.number().int(),
    severity: z.enum(SEVERITIES),
    enabled: z.boolean(),
    notify: z.boolean(),
    auto_remediate: z.boolean(),
    firing: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "AlertRule" });

export const alertJsonSchema = z
  .object({
    id: z.string(),
    rule_id: z.string().nullable(),
    rule_name: z.string().nullable(),
    rule_type: z.enum(ALERT_EVENT_TYPES),
    status: z.enum(ALERT_STATUSES),
    severity: z.enum(SEVERITIES),
    subject_type: z.string(),
    subject_id: z.string(),
    subject_label: z.string(),
    cluster_id: z.string().nullable(),
    node_id: z.string().nullable(),
    tenant_id: z.string().nullable(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
    fired_at: z.string(),
    last_seen_at: z.string(),
    resolved_at: z.string().nullable(),
    acknowledged_at: z.string().nullable(),
    acknowledged_by: z.string().nullable(),
  })
  .meta({ id: "AlertEvent" });

export const listAlertsQuery = z.strictObject({
  ...paginationQuery,
  status: z.enum(ALERT_STATUSES).optional(),
  severity: z.enum(SEVERITIES).optional(),
  rule_type: z.enum(ALERT_EVENT_TYPES).optional(),
  cluster_id: z.uuid().optional(),
  node_id: z.uuid().optional(),
});
export type ListAlertsQuery = z.output<typeof listAlertsQuery>;

export const NOTIFICATION_STATUSES = ["pending", "sent", "failed"] as const;
export const NOTIFICATION_KINDS = ["firing", "resolved", "demo_request", "account", "invoice"] as const;
export const NOTIFICATION_CHANNELS = ["email", "webhook", "console"] as const;

export const notificationJsonSchema = z
  .object({
    id: z.string(),
    alert_id: z.string().nullable(),
    demo_request_id: z.string().nullable(),
    kind: z.enum(NOTIFICATION_KINDS),
    channel: z.enum(NOTIFICATION_CHANNELS),
    target: z.string(),
    subject: z.string(),
    status: z.enum(NOTIFICATION_STATUSES),
    attempts: z.number().int(),
    next_attempt_at: z.string().nullable(),
    last_error: z.string().nullable(),
    sent_at: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: "Notification" });

export const listNotificationsQuery = z.strictObject({
  ...paginationQuery,
  status: z.enum(NOTIFICATION_STATUSES).optional(),
  channel: z.enum(NOTIFICATION_CHANNELS).optional(),
});

export const remediationJsonSchema = z
  .object({
    id: z.string(),
    node_id: z.string(),
    hostname: z.string(),
    alert_id: z.string().nullable(),
    cause: z.string(),
    action: z.literal("quarantine"),
    outcome: z.enum(REMEDIATION_OUTCOMES),
    jobs_requeued: z.number().int(),
    details: z.record(z.string(), z.unknown()),
    created_at: z.string(),
  })
  .meta({ id: "Remediation" });

export const listRemediationsQuery = z.strictObject({ ...paginationQuery, outcome: z.enum(REMEDIATION_OUTCOMES).optional() });

export const remediationCapSchema = z
  .object({ limit: z.number().int(), window_s: z.number().int(), used: z.number().int() })
  .meta({ id: "RemediationCap" });

/** The console's alert lists and their CSV export: filters, sort, page, and whether repeats are grouped. */
export const alertListParams = z.object({
  ...listParamsShape,
  status: z.enum(ALERT_STATUSES).optional(),
  severity: z.enum(SEVERITIES).optional(),
  rule_type: z.string().max(40).optional(),
  sort: z.enum(["newest", "oldest", "severity", "count"]).default("newest"),
  group: z.enum(["1", "0"]).default("1"),
});
export type AlertListParams = z.output<typeof alertListParams>;

/** The console's notification outbox list and its CSV export. */
export const notificationListParams = z.object({
  ...listParamsShape,
  status: z.enum(NOTIFICATION_STATUSES).optional(),
  channel: z.enum(NOTIFICATION_CHANNELS).optional(),
  kind: z.enum(NOTIFICATION_KINDS).optional(),
  sort: z.enum(["newest", "oldest", "attempts"]).default("newest"),
});
export type NotificationListParams = z.output<typeof notificationListParams>;
