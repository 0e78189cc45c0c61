import type { z } from "zod";
import type { Principal } from "@/lib/auth/principal";
import type { Prisma } from "@/lib/generated/prisma/client";
import { oneOf } from "@/lib/vocabulary";
import { ALERT_EVENT_TYPES, ALERT_STATUSES, SEVERITIES } from "./rule-types";
import type { alertJsonSchema } from "./schemas";

export const alertInclude = { rule: { select: { name: true } } } satisfies Prisma.AlertEventInclude;
type AlertRow = Prisma.AlertEventGetPayload<{ include: typeof alertInclude }>;

export function alertJson(a: AlertRow, p: Principal): z.input<typeof alertJsonSchema> {
  // a tenant learns what happened to its work, not the fleet's internal ids
  const fleetIds = p.kind === "operator";
  return {
    id: a.id,
    rule_id: fleetIds ? a.ruleId : null,
    rule_name: a.rule?.name ?? null,
    rule_type: oneOf(ALERT_EVENT_TYPES, a.ruleType, "alert_events.rule_type"),
    status: oneOf(ALERT_STATUSES, a.status, "alert_events.status"),
    severity: oneOf(SEVERITIES, a.severity, "alert_events.severity"),
    subject_type: a.subjectType,
    subject_id: a.subjectId,
    subject_label: a.subjectLabel,
    cluster_id: fleetIds ? a.clusterId : null,
    node_id: fleetIds ? a.nodeId : null,
    tenant_id: a.tenantId,
    message: a.message,
    details: fleetIds ? ((a.details ?? {}) as Record<string, unknown>) : tenantSafeDetails(a.details),
    fired_at: a.firedAt.toISOString(),
    last_seen_at: a.lastSeenAt.toISOString(),
    resolved_at: a.resolvedAt?.toISOString() ?? null,
    acknowledged_at: a.acknowledgedAt?.toISOString() ?? null,
    // who of the operators took it is the operators' business
    acknowledged_by: fleetIds ? a.acknowledgedBy : a.acknowledgedBy ? "GPUForge operations" : null,
  };
}

const INTERNAL_DETAIL_KEYS = new Set([
  "node",
  "hostname",
  "node_id",
  "cluster_id",
  "gpu_id",
  "gpu_uuid",
  "rule_id",
  "jobs",
  "summary",
  "from_status",
  "by",
]);
const UUID_OR_EMAIL = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[^\s@]+@[^\s@]+|GPU-[0-9a-f-]{8,}/i;

/** An alert's details as a tenant may read them: figures about its work, no fleet ids, hostnames or people. */
export function tenantSafeDetails(details: unknown): Record<string, unknown> {
  if (typeof details !== "object" || details === null || Array.isArray(details)) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(details)) {
    if (INTERNAL_DETAIL_KEYS.has(k) || k.endsWith("_id") || k.endsWith("_uuid")) continue;
    if (typeof v === "string" && UUID_OR_EMAIL.test(v)) continue;
    if (typeof v === "object" && v !== null) continue;
    out[k] = v;
  }
  return out;
}
