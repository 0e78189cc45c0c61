import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader } from "@/components/ui/card";
import { formatRelative } from "@/components/ui/format";
import type { SlaJson } from "@/lib/endpoints/schemas";
import type { ErrorBudget, TimelineSlot } from "@/lib/endpoints/sla";
import { formatDuration } from "@/lib/billing/money";
import { formatAxisTime } from "@/lib/metrics/time-range";

const pct = (v: number | null, digits = 2) => (v === null ? "—" : `${v.toFixed(digits)} %`);
const minutes = (v: number) => v.toFixed(v < 10 ? 2 : 1);
const MINUTE = 60_000;

export interface SlaAlertView {
  rule: { name: string; window_s: number } | null;
  window: SlaJson | null;
  firing: { id: string; message: string; firedAt: string } | null;
}

/** "24 h", or "3 min" for an endpoint younger than the window: the list cell's short window. */
function shortWindow(servedFrom: string | null, from: string, to: string): string {
  if (!servedFrom || Date.parse(servedFrom) - Date.parse(from) < MINUTE) return "24 h";
  return formatDuration(Date.parse(to) - Date.parse(servedFrom));
}

/** The list's SLA cell: the last 24 hours (or as long as it has served) against each objective, and the alert if one fires. */
export function SlaCell({
  target,
  summary,
  alertHref,
}: {
  target: string;
  summary?: {
    availability_pct: number | null;
    compliant: { availability: boolean | null; p95: boolean | null };
    served_from: string | null;
    from: string;
    to: string;
    alert: { id: string } | null;
  };
  alertHref: (id: string) => string;
}) {
  if (!summary) return <span className="text-xs text-slate-600">{target || "—"}</span>;
  const w = shortWindow(summary.served_from, summary.from, summary.to);
  return (
    <div className="flex flex-col gap-1 text-xs">
      <span className="text-slate-600">{target || "no target"}</span>
      <span className="flex flex-wrap items-center gap-1.5">
        {summary.availability_pct === null ? (
          <span className="text-slate-500">no data yet</span>
        ) : (
          <span className={summary.compliant.availability === false ? "font-medium text-red-700" : "text-emerald-700"}>
            {pct(summary.availability_pct)} up ({w})
          </span>
        )}
        {summary.compliant.p95 === false ? (
          <span className="font-medium text-red-700">p95 missed ({w})</span>
        ) : summary.compliant.p95 === true ? (
          <span className="text-emerald-700">p95 met</span>
        ) : null}
        {summary.alert ? (
          <Link href={alertHref(summary.alert.id)} className="rounded focus-visible:outline-2 focus-visible:outline-indigo-600">
            <Badge tone="red">SLA alert</Badge>
          </Link>
        ) : null}
      </span>
    </div>
  );
}

type Verdict = { tone: "green" | "red" | "neutral"; label: string };
const verdictOf = (compliant: boolean | null, hasTarget: boolean): Verdict =>
  !hasTarget
    ? { tone: "neutral", label: "No target" }
    : compliant === null
      ? { tone: "neutral", label: "No data yet" }
      : compliant
        ? { tone: "green", label: "Met" }
        : { tone: "red", label: "Missed" };

/** A budget as a bar and a sentence: how much of what the objective allows was used, what is left, or by how much it is overspent. */
function BudgetLine({ budget, unit, testId }: { budget: ErrorBudget | null; unit: string; testId: string }) {
  if (!budget) return null;
  const usedPct =
    budget.allowed_minutes > 0 ? Math.min(100, (100 * budget.used_minutes) / budget.allowed_minutes) : budget.used_minutes > 0 ? 100 : 0;
  const over = budget.overspent_minutes > 0;
  return (
    <div className="mt-3" data-testid={testId}>
      <div className="flex items-baseline justify-between text-xs">
        <span className="font-medium text-slate-700">Budget</span>
        <span className={over ? "font-medium text-red-700" : "text-slate-600"}>
          {budget.remaining_pct === null && !over
            ? "nothing allowed yet"
            : over
              ? `overspent by ${minutes(budget.overspent_minutes)} min`
              : `${(budget.remaining_pct ?? 0).toFixed(0)} % left`}
        </span>
      </div>
      <div
        className="mt-1 h-1.5 overflow-hidden rounded-full bg-slate-100"
        role="img"
        aria-label={`${minutes(budget.used_minutes)} of ${minutes(budget.allowed_minutes)} minutes of ${unit} allowed used`}
      >
        <div
          className={`h-full rounded-full ${over ? "bg-red-500" : usedPct > 75 ? "bg-amber-500" : "bg-emerald-500"}`}
          style={{ width: `${usedPct}%` }}
        />
      </div>
      <p className="mt-1 text-xs text-slate-500">
        {minutes(budget.used_minutes)} of {minutes(budget.allowed_minutes)} min of {unit} allowed used
      </p>
    </div>
  );
}

function Objective({
  title,
  verdict,
  value,
  valueMissed,
  lines,
  budget,
  budgetUnit,
  testId,
}: {
  title: string;
  verdict: Verdict;
  value: React.ReactNode;
  valueMissed: boolean;
  lines: string[];
  budget: ErrorBudget | null;
  budgetUnit: string;
  testId: string;
}) {
  const ring = verdict.tone === "red" ? "ring-red-200" : verdict.tone === "green" ? "ring-emerald-200" : "ring-slate-200";
  return (
    <Card className={`px-5 py-4 ring-1 ${ring}`} data-testid={testId} data-verdict={verdict.label.toLowerCase()}>
      <div className="flex items-start justify-between gap-3">
        <p className="text-xs font-medium uppercase tracking-wide text-slate-500">{title}</p>
        <Badge tone={verdict.tone}>{verdict.label}</Badge>
      </div>
      <p className={`mt-1 text-2xl font-semibold tabular-nums ${valueMissed ? "text-red-700" : "text-slate-900"}`}>{value}</p>
      {lines.map((l) => (
        <p key={l} className="mt-0.5 text-xs text-slate-500">
          {l}
        </p>
      ))}
      <BudgetLine budget={budget} unit={budgetUnit} testId={`${testId}-budget`} />
    </Card>
  );
}

/**
 * Each objective on its own, met or missed in colour, with its own budget and the window named:
 * availability (its downtime budget) and latency (its budget of slow minutes); then a minute strip
 * and the SLA alert's own verdict over the rule's window.
 */
export function EndpointSlaPanel({
  sla,
  timeline,
  alert,
  rangeWords,
  windowWords: window,
  alertsHref,
}: {
  sla: SlaJson;
  timeline: TimelineSlot[];
  alert: SlaAlertView;
  rangeWords: string;
  /** the window the figures cover ("the 3 min since it first served"), from the view model */
  windowWords: string;
  alertsHref: string;
}) {
  const availability = verdictOf(sla.compliant.availability, sla.targets.availability_pct !== null);
  const latency = verdictOf(sla.compliant.p95, sla.targets.p95_ms !== null);
  return (
    <section aria-label="Service level" className="mt-4">
      <p className="mb-3 text-sm text-slate-600" data-testid="sla-window">
        Figures over {window}
        {window !== rangeWords ? ` (of ${rangeWords})` : ""}; the SLA alert below checks its own, shorter window.
      </p>
      <div className="grid gap-4 lg:grid-cols-2">
        <Objective
          title="Availability objective"
          testId="slo-availability"
          verdict={availability}
          value={sla.availability_pct === null ? "No data yet" : pct(sla.availability_pct)}
          valueMissed={sla.compliant.availability === false}
          lines={[
            sla.targets.availability_pct !== null
              ? `Target ${sla.targets.availability_pct} % of minutes up, over ${window}`
              : "No availability target set",
            sla.availability_pct === null
              ? "Counted from the first time a replica is ready"
              : `${minutes(sla.minutes_down)} min down of ${minutes(sla.minutes_expected)} served · ${minutes(sla.minutes_idle)} idle min count as up${sla.minutes_no_data > 0 ? ` · ${minutes(sla.minutes_no_data)} min without data` : ""}`,
          ]}
          budget={sla.error_budget}
          budgetUnit="downtime"
        />
        <Objective
          title="Latency objective"
          testId="slo-latency"
          verdict={latency}
          value={
            sla.p95_compliance_pct === null ? (sla.targets.p95_ms ? "No traffic yet" : "—") : `${pct(sla.p95_compliance_pct, 1)} of minutes`
          }
          valueMissed={sla.compliant.p95 === false}
          lines={[
            sla.targets.p95_ms !== null
              ? `p95 within ${sla.targets.p95_ms} ms in at least ${sla.targets.p95_objective_pct} % of the minutes with traffic, over ${window}`
              : "No latency target set",
            sla.p95_worst_ms !== null
              ? `${minutes(sla.minutes_with_traffic)} min with traffic · worst minute's p95 ${sla.p95_worst_ms} ms`
              : "No minute with traffic yet",
          ]}
          budget={sla.latency_budget}
          budgetUnit="slow minutes"
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
  const figures =
    !w || w.availability_pct === null
      ? "no data yet."
      : `${pct(w.availability_pct)} available${w.p95_compliance_pct !== null ? `, p95 within target in ${pct(w.p95_compliance_pct, 1)} of minutes` : ""}.`;
  // the rule's window misses an objective but the rule has not evaluated it yet: never a green "no alert"
  if (w && (w.compliant.availability === false || w.compliant.p95 === false))
    return (
      <p
        role="status"
        data-testid="sla-alert-box"
        data-tone="amber"
        className="mt-4 rounded-lg bg-amber-50 px-4 py-3 text-sm text-amber-900 ring-1 ring-amber-200"
      >
        <strong>No SLA alert yet.</strong> The rule “{alert.rule.name}” checks the last {mins} min, which miss the SLA: {figures} It fires
        at its next evaluation.
      </p>
    );
  return (
    <p
      data-testid="sla-alert-box"
      data-tone="green"
      className="mt-4 rounded-lg bg-emerald-50 px-4 py-3 text-sm text-emerald-900 ring-1 ring-emerald-200"
    >
      <strong>No SLA alert.</strong> The rule “{alert.rule.name}” checks the last {mins} min: {figures}
    </p>
  );
}
