import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader, Stat } from "@/components/ui/card";
import { formatRelative } from "@/components/ui/format";
import type { SlaJson } from "@/lib/endpoints/schemas";
import type { TimelineSlot } from "@/lib/endpoints/sla";
import { formatAxisTime } from "@/lib/metrics/time-range";

const pct = (v: number | null, digits = 2) => (v === null ? "—" : `${v.toFixed(digits)} %`);
const minutes = (v: number) => v.toFixed(v < 10 ? 2 : 1);

export interface SlaAlertView {
  rule: { name: string; window_s: number } | null;
  window: SlaJson | null;
  firing: { id: string; message: string; firedAt: string } | null;
}

/** The list's SLA cell: the last 24 hours against the target, and the alert if one fires. */
export function SlaCell({
  target,
  summary,
  alertHref,
}: {
  target: string;
  summary?: {
    availability_pct: number | null;
    compliant: { availability: boolean | null; p95: boolean | null };
    alert: { id: string } | null;
  };
  alertHref: (id: string) => string;
}) {
  if (!summary) return <span className="text-xs text-slate-600">{target || "—"}</span>;
  return (
    <div className="flex flex-col gap-1 text-xs">
      <span className="text-slate-600">{target || "no target"}</span>
      <span className="flex flex-wrap items-center gap-1.5">
        {summary.availability_pct === null ? (
          <span className="text-slate-500">no data yet</span>
        ) : (
          <span className={summary.compliant.availability === false ? "font-medium text-red-700" : "text-emerald-700"}>
            {pct(summary.availability_pct)} up (24 h)
          </span>
        )}
        {summary.compliant.p95 === false ? <span className="font-medium text-red-700">p95 missed (24 h)</span> : null}
        {summary.alert ? (
          <Link href={alertHref(summary.alert.id)} className="rounded focus-visible:outline-2 focus-visible:outline-indigo-600">
            <Badge tone="red">SLA alert</Badge>
          </Link>
        ) : null}
      </span>
    </div>
  );
}

/** Availability, latency compliance, error budget and downtime over the page's range, a minute strip, and the SLA alert's own verdict. */
export function EndpointSlaPanel({
  sla,
  timeline,
  alert,
  rangeWords,
  alertsHref,
}: {
  sla: SlaJson;
  timeline: TimelineSlot[];
  alert: SlaAlertView;
  rangeWords: string;
  alertsHref: string;
}) {
  const budget = sla.error_budget;
  const noData = sla.availability_pct === null;
  return (
    <section aria-label="Service level" className="mt-6">
      <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
        <Stat
          label={`Availability, ${rangeWords}`}
          value={
            noData ? (
              "No data yet"
            ) : (
              <span className={sla.compliant.availability === false ? "text-red-700" : undefined}>{pct(sla.availability_pct)}</span>
            )
          }
          hint={
            noData
              ? "Counted from the first time a replica is ready"
              : sla.targets.availability_pct
                ? `target ${sla.targets.availability_pct} % · ${sla.compliant.availability ? "met" : "missed"}`
                : "no target set"
          }
        />
        <Stat
          label="p95 within target"
          value={pct(sla.p95_compliance_pct, 1)}
          hint={
            sla.targets.p95_ms
              ? sla.p95_compliance_pct === null
                ? `target ${sla.targets.p95_ms} ms · no traffic yet`
                : `of minutes with traffic, target ${sla.targets.p95_ms} ms (met at ≥ 95 %)`
              : "no latency target"
          }
        />
        <Stat
          label="Error budget left"
          value={
            !budget ? (
              "—"
            ) : budget.remaining_pct === null ? (
              "No data yet"
            ) : budget.overspent_minutes > 0 ? (
              <span className="text-red-700">0 % · overspent</span>
            ) : (
              `${budget.remaining_pct.toFixed(0)} %`
            )
          }
          hint={
            !budget
              ? "set an availability target"
              : budget.overspent_minutes > 0
                ? `${minutes(budget.used_minutes)} min down; ${minutes(budget.allowed_minutes)} allowed; ${minutes(budget.overspent_minutes)} over`
                : `${minutes(budget.used_minutes)} of ${minutes(budget.allowed_minutes)} min of downtime allowed used`
          }
        />
        <Stat
          label="Downtime"
          value={`${minutes(sla.minutes_down)} min`}
          hint={`of ${minutes(sla.minutes_expected)} min served · ${minutes(sla.minutes_idle)} idle min count as up${sla.minutes_no_data > 0 ? ` · ${minutes(sla.minutes_no_data)} min without data` : ""}`}
        />
      </div>
      <Card className="mt-4">
        <CardHeader title="Availability over time" description={`Each bar is ${stepMinutes(timeline)} min of ${rangeWords}, UTC.`} />
        <div className="px-5 pb-5 pt-4">
          <ul className="mb-3 flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-600" aria-label="Legend">
            <li className="flex items-center gap-1.5">
              <span aria-hidden className="h-2.5 w-2.5 rounded-sm bg-emerald-500" />
              Served, or idle with a ready replica
            </li>
            <li className="flex items-center gap-1.5">
              <span aria-hidden className="h-2.5 w-2.5 rounded-sm bg-red-500" />
              Down: failing, ≥ 5 % errors, or no ready replica
            </li>
            <li className="flex items-center gap-1.5">
              <span aria-hidden className="h-2.5 w-2.5 rounded-sm bg-slate-400" />
              No data: GPUForge itself was not running
            </li>
            <li className="flex items-center gap-1.5">
              <span aria-hidden className="h-2.5 w-2.5 rounded-sm bg-slate-100 ring-1 ring-slate-200" />
              Not promised yet, or stopped
            </li>
          </ul>
          <SlaStrip timeline={timeline} />
          <div className="mt-2 flex justify-between text-xs text-slate-500">
            <span>
              {timeline[0]
                ? formatAxisTime(Date.parse(timeline[0].start), Date.parse(timeline.at(-1)!.start) - Date.parse(timeline[0].start), true)
                : ""}
            </span>
            <span>now (UTC)</span>
          </div>
        </div>
      </Card>
      <SlaAlertBox alert={alert} alertsHref={alertsHref} />
    </section>
  );
}

const stepMinutes = (timeline: TimelineSlot[]) =>
  timeline.length > 1 ? Math.round((Date.parse(timeline[1]!.start) - Date.parse(timeline[0]!.start)) / 60_000) : 1;

function SlaStrip({ timeline }: { timeline: TimelineSlot[] }) {
  const down = timeline.reduce((s, t) => s + t.down, 0);
  const gaps = timeline.reduce((s, t) => s + t.no_data, 0);
  return (
    <div
      role="img"
      aria-label={`${timeline.length} slots: ${minutes(down)} minutes down, ${minutes(gaps)} minutes without data`}
      className="flex h-6 gap-px overflow-hidden rounded"
      data-testid="sla-strip"
    >
      {timeline.map((t) => {
        const promised = t.up + t.idle + t.down;
        const tone = t.down > 0 ? "bg-red-500" : promised > 0 ? "bg-emerald-500" : t.no_data > 0 ? "bg-slate-400" : "bg-slate-100";
        return (
          <span
            key={t.start}
            className={`flex-1 ${tone}`}
            title={`${t.start.slice(0, 16).replace("T", " ")} UTC: ${minutes(t.up)} up, ${minutes(t.idle)} idle, ${minutes(t.down)} down, ${minutes(t.no_data)} no data`}
          />
        );
      })}
    </div>
  );
}

function SlaAlertBox({ alert, alertsHref }: { alert: SlaAlertView; alertsHref: string }) {
  if (alert.firing) {
    return (
      <p role="status" className="mt-4 rounded-lg bg-red-50 px-4 py-3 text-sm text-red-900 ring-1 ring-red-200">
        <strong>SLA alert firing</strong> since {formatRelative(alert.firing.firedAt)}: {alert.firing.message}{" "}
        <Link className="font-medium underline" href={alertsHref}>
          See the alert
        </Link>
      </p>
    );
  }
  if (!alert.rule)
    return (
      <p className="mt-4 rounded-lg bg-slate-50 px-4 py-3 text-sm text-slate-700 ring-1 ring-slate-200">
        No SLA alert rule is enabled: a missed target raises no alert.
      </p>
    );
  const w = alert.window;
  const mins = Math.round(alert.rule.window_s / 60);
  return (
    <p className="mt-4 rounded-lg bg-emerald-50 px-4 py-3 text-sm text-emerald-900 ring-1 ring-emerald-200">
      <strong>No SLA alert.</strong> The rule “{alert.rule.name}” checks the last {mins} min:{" "}
      {!w || w.availability_pct === null
        ? "no data yet."
        : `${pct(w.availability_pct)} available${w.p95_compliance_pct !== null ? `, p95 within target in ${pct(w.p95_compliance_pct, 1)} of minutes` : ""}.`}
    </p>
  );
}
