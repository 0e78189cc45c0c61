import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { displayActor, resolveActors } from "@/lib/audit/actor-names";
import { db } from "@/lib/db/client";
import { nullIfRefused } from "@/lib/errors";
import { isUuid } from "@/lib/ids";
import { endpointGpuTelemetry } from "@/lib/metrics/held-gpu-telemetry";
import { describeRange, type TimeRange } from "@/lib/metrics/time-range";
import { endpointHeadline, slaWindowWords } from "./endpoint-headline";
import { endpointJson } from "./endpoint-json";
import { listEndpointKeys } from "./endpoint-keys";
import { endpointSeries } from "./endpoint-metrics";
import { endpointSla, endpointSlaView, slaFacts } from "./endpoint-sla";
import { getEndpointOrThrow } from "./get-endpoint";
import { listEndpointHistory } from "./list-endpoint-history";
import { computeSla } from "./sla";

const DAY_MS = 86_400_000;

/** The sla_breach rule that speaks for an endpoint (per cluster first, then fleet-wide), as the page explains it. */
async function slaRuleFor(clusterId: string | null) {
  const rules = await db().alertRule.findMany({
    where: { ruleType: "sla_breach", enabled: true, OR: [{ clusterId: null }, ...(clusterId ? [{ clusterId }] : [])] },
    select: { name: true, windowS: true, clusterId: true },
  });
  return rules.sort((a, b) => Number(b.clusterId !== null) - Number(a.clusterId !== null))[0] ?? null;
}

/** Firing SLA alerts of endpoints, by endpoint id (what the lists and the detail page show next to the figures). */
async function firingSlaAlerts(p: Principal, endpointIds: string[]) {
  if (endpointIds.length === 0) return new Map<string, { id: string; message: string; firedAt: string }>();
  const rows = await db().alertEvent.findMany({
    where: {
      ruleType: "sla_breach",
      status: "firing",
      subjectType: "endpoint",
      subjectId: { in: endpointIds },
      ...(p.kind === "tenant" ? { tenantId: p.tenantId } : {}),
    },
    select: { id: true, subjectId: true, message: true, firedAt: true },
  });
  return new Map(rows.map((r) => [r.subjectId, { id: r.id, message: r.message, firedAt: r.firedAt.toISOString() }]));
}

/**
 * The SLA column of the endpoint lists: availability over the last 24 hours against the target
 * (null: no data yet) and whether an SLA alert fires now — the same arithmetic and the same alert
 * the detail page shows, so a list never says "fine" where the page says otherwise.
 */
export async function endpointSlaSummaries(
  p: Principal,
  endpoints: Array<{ id: string; sla_p95_ms: number | null; sla_availability_pct: number | null }>,
  now = new Date(),
) {
  const ids = endpoints.map((e) => e.id);
  const from = new Date(now.getTime() - DAY_MS);
  const [facts, alerts] = await Promise.all([ids.length ? slaFacts(ids, from, now) : new Map(), firingSlaAlerts(p, ids)]);
  return new Map(
    endpoints.map((e) => {
      const f = facts.get(e.id);
      const sla = f
        ? computeSla({
            from: from.getTime(),
            to: now.getTime(),
            now: now.getTime(),
            ...f,
            targets: { p95Ms: e.sla_p95_ms, availabilityPct: e.sla_availability_pct },
          })
        : null;
      return [
        e.id,
        {
          availability_pct: sla?.availability_pct ?? null,
          compliant: sla?.compliant ?? { availability: null, p95: null },
          // how long the figures cover: an endpoint younger than a day has not been up "for 24 h"
          served_from: sla?.served_from ?? null,
          from: from.toISOString(),
          to: now.toISOString(),
          alert: alerts.get(e.id) ?? null,
        },
      ];
    }),
  );
}
export type SlaSummary = NonNullable<ReturnType<Awaited<ReturnType<typeof endpointSlaSummaries>>["get"]>>;

/**
 * Everything an endpoint's page shows over a range (the same figures the API serves), or null when
 * the caller may not see it. `rangeFor` picks the range once the endpoint's age is known (a young
 * endpoint's page opens on a range that fits what it has: lib/metrics/time-range.ts fittingPreset).
 */
export async function endpointPageData(p: Principal, id: string, rangeFor: (createdAt: Date) => TimeRange) {
  if (!isUuid(id)) return null;
  const row = await nullIfRefused(getEndpointOrThrow(p, id));
  if (!row) return null;
  const range = rangeFor(row.createdAt);
  const window = { from: range.from.toISOString(), to: range.to.toISOString() };
  const [series, view, history, tenant, rule, alerts, gpuTelemetry] = await Promise.all([
    endpointSeries(p, id, window),
    endpointSlaView(p, id, window, 96),
    listEndpointHistory(p, id),
    db().tenant.findUniqueOrThrow({ where: { id: row.tenantId }, select: { name: true } }),
    slaRuleFor(row.clusterId),
    firingSlaAlerts(p, [id]),
    endpointGpuTelemetry(p, id, {}),
  ]);
  // its own keys: tenant admins and operators manage them, members do not see them
  const keys = p.kind === "operator" || (p.kind === "tenant" && p.role === "tenant_admin") ? await listEndpointKeys(p, id) : null;
  // the alert's own window, computed by the same function the rule evaluates
  const now = new Date();
  const alertWindow = rule
    ? await endpointSla(p, id, { from: new Date(now.getTime() - rule.windowS * 1000).toISOString(), to: now.toISOString() }, now)
    : null;
  const actors = await resolveActors({ labels: history.transitions.map((t) => t.actor) });
  const firing = alerts.get(id) ?? null;
  // the headline judges the freshest window: the SLA alert rule's, else the page's
  const rangeWords = describeRange(range);
  const headline = endpointHeadline({
    status: row.status,
    statusReason: row.statusReason,
    now: alertWindow ?? view.sla,
    windowWords:
      alertWindow && rule
        ? slaWindowWords(alertWindow, `the last ${Math.round(rule.windowS / 60)} min`)
        : slaWindowWords(view.sla, rangeWords),
    alertFiring: firing !== null,
  });
  return {
    endpoint: endpointJson(row),
    series,
    sla: view.sla,
    timeline: view.timeline,
    history: { ...history, transitions: history.transitions.map((t) => ({ ...t, actor: displayActor(actors.byLabel, t.actor) })) },
    tenantName: tenant.name,
    slaAlert: { rule: rule ? { name: rule.name, window_s: rule.windowS } : null, window: alertWindow, firing },
    headline,
    /** the window the page's SLA figures cover, named (shorter than the range for a young endpoint) */
    slaWindow: slaWindowWords(view.sla, rangeWords),
    gpuTelemetry,
    keys,
    range,
  };
}
