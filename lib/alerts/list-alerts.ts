import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db, pool } from "@/lib/db/client";
import { forbidden } from "@/lib/errors";
import { toCsv } from "@/lib/http/csv";
import { dayRange, EXPORT_LIMIT } from "@/lib/http/list-params";
import { alertJson } from "./alert-json";
import type { AlertListParams } from "./schemas";
import { silencedAmong } from "./silences";

/**
 * The console's alert lists: filtered, sorted, paged, exported, and by default grouped — every
 * alert of one rule about one subject is one row with its count (fifteen "node unreachable …
 * resolved" of the same node read as one line "× 15"), its newest occurrence in front.
 */

function filters(p: Principal, q: AlertListParams) {
  if (p.kind === "agent") throw forbidden("Alerts are for operators and tenants");
  const where: string[] = [];
  const args: unknown[] = [];
  const add = (sql: string, v: unknown) => {
    args.push(v);
    where.push(sql.replaceAll("?", `$${args.length}`));
  };
  if (p.kind === "tenant") add("e.tenant_id = ?::uuid", p.tenantId);
  if (q.status) add("e.status = ?", q.status);
  if (q.severity) add("e.severity = ?", q.severity);
  if (q.rule_type) add("e.rule_type = ?", q.rule_type);
  if (q.q) add("(e.message ILIKE ? OR e.subject_label ILIKE ?)", `%${q.q.replace(/[%_\\]/g, "\\$&")}%`);
  const days = dayRange(q.from, q.to);
  if (days?.gte) add("e.fired_at >= ?", days.gte);
  if (days?.lt) add("e.fired_at < ?", days.lt);
  return { sql: where.length ? `WHERE ${where.join(" AND ")}` : "", args };
}

const ORDER = {
  newest: "last_fired DESC",
  oldest: "last_fired ASC",
  severity: "CASE max_severity WHEN 3 THEN 0 WHEN 2 THEN 1 ELSE 2 END, last_fired DESC",
  count: "n DESC, last_fired DESC",
} as const;
const alertInclude = { rule: { select: { name: true } } } as const;

/** One page of groups (or of single alerts with group=0), each with its newest occurrences. */
export async function listAlertGroups(p: Principal, q: AlertListParams) {
  const f = filters(p, q);
  const key = q.group === "1" ? "COALESCE(e.rule_id::text, e.rule_type) || ':' || e.subject_type || ':' || e.subject_id" : "e.id::text";
  const offset = (q.page - 1) * q.per_page;
  const { rows } = await pool().query<{
    gkey: string;
    n: number;
    firing: number;
    first_fired: Date;
    last_fired: Date;
    ids: string[];
    total: number;
  }>(
    `SELECT gkey, n, firing, first_fired, last_fired, ids, count(*) OVER ()::int AS total FROM (
       SELECT ${key} AS gkey, count(*)::int AS n, count(*) FILTER (WHERE e.status = 'firing')::int AS firing,
              min(e.fired_at) AS first_fired, max(e.fired_at) AS last_fired,
              max(CASE e.severity WHEN 'critical' THEN 3 WHEN 'warning' THEN 2 ELSE 1 END) AS max_severity,
              (array_agg(e.id::text ORDER BY e.fired_at DESC, e.id DESC))[1:20] AS ids
         FROM alert_events e ${f.sql} GROUP BY 1
     ) g ORDER BY ${ORDER[q.sort]} LIMIT ${q.per_page} OFFSET ${offset}`,
    f.args,
  );
  const events = await db().alertEvent.findMany({ where: { id: { in: rows.flatMap((r) => r.ids) } }, include: alertInclude });
  const byId = new Map(events.map((e) => [e.id, e]));
  const silenced = await silencedAmong(rows.map((r) => byId.get(r.ids[0]!)!).filter(Boolean));
  const total = rows[0]?.total ?? (offset > 0 ? await countGroups(p, q) : 0);
  return {
    total,
    groups: rows.map((r) => ({
      key: r.gkey,
      count: r.n,
      firing: r.firing,
      firstFiredAt: r.first_fired.toISOString(),
      lastFiredAt: r.last_fired.toISOString(),
      latest: byId.get(r.ids[0]!)!,
      occurrences: r.ids.map((id) => byId.get(id)!).filter(Boolean),
      silence: silenced.get(r.ids[0]!) ?? null,
    })),
  };
}

async function countGroups(p: Principal, q: AlertListParams): Promise<number> {
  const f = filters(p, q);
  const key = q.group === "1" ? "COALESCE(e.rule_id::text, e.rule_type) || ':' || e.subject_type || ':' || e.subject_id" : "e.id::text";
  const { rows } = await pool().query<{ n: number }>(`SELECT count(DISTINCT ${key})::int AS n FROM alert_events e ${f.sql}`, f.args);
  return rows[0]!.n;
}

/** Every alert matching the filters (up to EXPORT_LIMIT, one row per occurrence), as CSV. */
export async function alertsCsv(p: Principal, q: AlertListParams): Promise<string> {
  const f = filters(p, q);
  const { rows } = await pool().query<{
    id: string;
    status: string;
    severity: string;
    rule_type: string;
    rule_name: string | null;
    subject_type: string;
    subject_label: string;
    message: string;
    fired_at: Date;
    resolved_at: Date | null;
    acknowledged_by: string | null;
  }>(
    `SELECT e.id, e.status, e.severity, e.rule_type, r.name AS rule_name, e.subject_type, e.subject_label, e.message, e.fired_at, e.resolved_at, e.acknowledged_by
       FROM alert_events e LEFT JOIN alert_rules r ON r.id = e.rule_id ${f.sql}
      ORDER BY e.fired_at ${q.sort === "oldest" ? "ASC" : "DESC"}, e.id LIMIT ${EXPORT_LIMIT}`,
    f.args,
  );
  return toCsv(
    ["id", "status", "severity", "type", "rule", "subject_type", "subject", "message", "fired_at", "resolved_at", "acknowledged_by"],
    rows.map((r) => [
      r.id,
      r.status,
      r.severity,
      r.rule_type,
      r.rule_name ?? "",
      r.subject_type,
      r.subject_label,
      r.message,
      r.fired_at.toISOString(),
      r.resolved_at?.toISOString() ?? "",
      r.acknowledged_by ?? "",
    ]),
  );
}

type AlertGroup = Awaited<ReturnType<typeof listAlertGroups>>["groups"][number];

/** A group as the plane shows it (plain data; fleet ids only for operators, as alertJson decides). */
export function alertGroupJson(g: AlertGroup, p: Principal) {
  return {
    key: g.key,
    count: g.count,
    firing: g.firing,
    firstFiredAt: g.firstFiredAt,
    lastFiredAt: g.lastFiredAt,
    latest: alertJson(g.latest, p),
    occurrences: g.occurrences.map((o) => alertJson(o, p)),
    silence: g.silence ? { kind: g.silence.kind, reason: g.silence.reason, endsAt: g.silence.endsAt.toISOString() } : null,
  };
}
