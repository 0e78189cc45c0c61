import "server-only";
import { assertOperator, type Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { db, pool } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { effectiveSettings } from "@/lib/settings/settings";
import { alertInclude } from "./alert-json";
import type { ListAlertsQuery } from "./schemas";

export async function listAlerts(p: Principal, q: ListAlertsQuery) {
  const rows = await db().alertEvent.findMany({
    where: {
      ...tenantScope(p),
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
  // operators see every alert, a tenant those about its own work, agents none
  const a = await db().alertEvent.findFirst({ where: { id, ...tenantScope(p) }, include: alertInclude });
  if (!a) throw notFound("Alert");
  return a;
}

/** Firing alerts by severity, for the fleet overview and the dashboard. */
export async function firingAlertCounts(p: Principal): Promise<{ total: number; critical: number; warning: number; info: number }> {
  const groups = await db().alertEvent.groupBy({
    by: ["severity"],
    where: { status: "firing", ...tenantScope(p) },
    _count: { _all: true },
  });
  const by = Object.fromEntries(groups.map((g) => [g.severity, g._count._all])) as Record<string, number>;
  return { total: groups.reduce((s, g) => s + g._count._all, 0), critical: by.critical ?? 0, warning: by.warning ?? 0, info: by.info ?? 0 };
}

export async function listNotifications(p: Principal, q: { limit: number; cursor?: string; status?: string; channel?: string }) {
  assertOperator(p);
  const rows = await db().notification.findMany({
    where: {
      ...(q.status ? { status: q.status } : {}),
      ...(q.channel ? { channel: q.channel } : {}),
      ...afterCursor(decodeCursor(q.cursor)),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: q.limit + 1,
  });
  return page(rows, q.limit);
}

export async function listRemediations(p: Principal, q: { limit: number; cursor?: string; outcome?: string }) {
  assertOperator(p);
  const rows = await db().remediation.findMany({
    where: { ...(q.outcome ? { outcome: q.outcome } : {}), ...afterCursor(decodeCursor(q.cursor)) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: q.limit + 1,
  });
  const hostnames = new Map(
    (
      await db().node.findMany({ where: { id: { in: [...new Set(rows.map((r) => r.nodeId))] } }, select: { id: true, hostname: true } })
    ).map((n) => [n.id, n.hostname]),
  );
  return {
    ...page(
      rows.map((r) => ({ ...r, hostname: hostnames.get(r.nodeId) ?? "(deleted node)" })),
      q.limit,
    ),
    cap: await remediationCapStatus(),
  };
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
