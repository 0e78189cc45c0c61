import "server-only";
import { assertOperator, type Principal } from "@/lib/auth/principal";
import { db, pool } from "@/lib/db/client";
import { effectiveSettings } from "@/lib/settings/settings";
import { forbidden, notFound } from "@/lib/errors";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { oneOf } from "@/lib/vocabulary";
import type { ListAlertsQuery } from "./schemas";
import { NOTIFICATION_CHANNELS, NOTIFICATION_KINDS, NOTIFICATION_STATUSES } from "./schemas";
import { ALERT_STATUSES, REMEDIATION_OUTCOMES, SEVERITIES } from "./rule-types";

export const alertInclude = { rule: { select: { name: true } } } as const;
type AlertRow = NonNullable<Awaited<ReturnType<typeof findAlert>>>;
const findAlert = (id: string) => db().alertEvent.findUnique({ where: { id }, include: alertInclude });

/** Who sees which alerts: operators all of them, a tenant those about its own work, agents none. */
function alertScope(p: Principal) {
  if (p.kind === "operator") return {};
  if (p.kind === "tenant") return { tenantId: p.tenantId };
  throw forbidden("Alerts are for operators and tenants");
}

export function alertJson(a: AlertRow, p: Principal) {
  // a tenant learns what happened to its work, not the fleet's internal ids
  const fleetIds = p.kind === "operator";
  return {
    id: a.id,
    rule_id: fleetIds ? a.ruleId : null,
    rule_name: a.rule?.name ?? null,
    rule_type: a.ruleType as never,
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

const INTERNAL_DETAIL_KEYS = new Set(["node", "hostname", "node_id", "cluster_id", "gpu_id", "gpu_uuid", "rule_id", "jobs", "summary", "from_status", "by"]);
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

export async function listAlerts(p: Principal, q: ListAlertsQuery) {
  const rows = await db().alertEvent.findMany({
    where: {
      ...alertScope(p),
      ...(q.status ? { status: q.status } : {}),
      ...(q.severity ? { severity: q.severity } : {}),
      ...(q.rule_type ? { ruleType: q.rule_type } : {}),
      ...(q.cluster_id ? { clusterId: q.cluster_id } : {}),
      ...(q.node_id ? { nodeId: q.node_id } : {}),
      ...afterCursor(decodeCursor(q.cursor), "firedAt"),
    },
    orderBy: [{ firedAt: "desc" }, { id: "desc" }],
    take: q.limit + 1,
    include: alertInclude,
  });
  return page(rows, q.limit, (a) => a.firedAt);
}

export async function getAlertOrThrow(p: Principal, id: string) {
  const a = await findAlert(id);
  if (!a || (p.kind === "tenant" && a.tenantId !== p.tenantId)) throw notFound("Alert");
  alertScope(p);
  return a;
}


/** Firing alerts by severity, for the fleet overview and the dashboard. */
export async function firingAlertCounts(p: Principal): Promise<{ total: number; critical: number; warning: number; info: number }> {
  const groups = await db().alertEvent.groupBy({ by: ["severity"], where: { status: "firing", ...alertScope(p) }, _count: { _all: true } });
  const by = Object.fromEntries(groups.map((g) => [g.severity, g._count._all])) as Record<string, number>;
  return { total: groups.reduce((s, g) => s + g._count._all, 0), critical: by.critical ?? 0, warning: by.warning ?? 0, info: by.info ?? 0 };
}

export async function listNotifications(p: Principal, q: { limit: number; cursor?: string; status?: string; channel?: string }) {
  assertOperator(p);
  const rows = await db().notification.findMany({
    where: { ...(q.status ? { status: q.status } : {}), ...(q.channel ? { channel: q.channel } : {}), ...afterCursor(decodeCursor(q.cursor)) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: q.limit + 1,
  });
  return page(rows, q.limit);
}

export type NotificationRow = Awaited<ReturnType<typeof listNotifications>>["data"][number];

export function notificationJson(n: NotificationRow) {
  return {
    id: n.id,
    alert_id: n.alertEventId,
    demo_request_id: n.demoRequestId,
    kind: oneOf(NOTIFICATION_KINDS, n.kind, "notifications.kind"),
    channel: oneOf(NOTIFICATION_CHANNELS, n.channel, "notifications.channel"),
    target: n.target,
    subject: n.subject,
    status: oneOf(NOTIFICATION_STATUSES, n.status, "notifications.status"),
    attempts: n.attempts,
    next_attempt_at: n.status === "pending" ? n.nextAttemptAt.toISOString() : null,
    last_error: n.lastError,
    sent_at: n.sentAt?.toISOString() ?? null,
    created_at: n.createdAt.toISOString(),
  };
}


export async function listRemediations(p: Principal, q: { limit: number; cursor?: string; outcome?: string }) {
  assertOperator(p);
  const rows = await db().remediation.findMany({
    where: { ...(q.outcome ? { outcome: q.outcome } : {}), ...afterCursor(decodeCursor(q.cursor)) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: q.limit + 1,
  });
  const hostnames = new Map(
    (await db().node.findMany({ where: { id: { in: [...new Set(rows.map((r) => r.nodeId))] } }, select: { id: true, hostname: true } })).map((n) => [n.id, n.hostname]),
  );
  return { ...page(rows.map((r) => ({ ...r, hostname: hostnames.get(r.nodeId) ?? "(deleted node)" })), q.limit), cap: await remediationCapStatus() };
}

/** The blast-radius cap as it stands: how many automatic quarantines the window has used. */
export async function remediationCapStatus() {
  const { cap: limit, windowS } = (await effectiveSettings()).remediation;
  const { rows } = await pool().query<{ used: number }>(
    `SELECT count(*)::int AS used FROM remediations WHERE outcome = 'quarantined' AND created_at > clock_timestamp() - make_interval(secs => $1::int)`,
    [windowS],
  );
  return { limit, window_s: windowS, used: rows[0]!.used };
}

export type RemediationRow = Awaited<ReturnType<typeof listRemediations>>["data"][number];

export function remediationJson(r: RemediationRow) {
  return {
    id: r.id,
    node_id: r.nodeId,
    hostname: r.hostname,
    alert_id: r.alertEventId,
    cause: r.cause,
    action: "quarantine" as const,
    outcome: oneOf(REMEDIATION_OUTCOMES, r.outcome, "remediations.outcome"),
    jobs_requeued: r.jobsRequeued,
    details: (r.details ?? {}) as Record<string, unknown>,
    created_at: r.createdAt.toISOString(),
  };
}
