import Link from "next/link";
import { InlineAction, SilenceForm } from "@/components/forms/alert-forms";
import type { FormAction } from "@/components/forms/use-action-form";
import { Badge } from "@/components/ui/badge";
import { formatDateTime, formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { alertTypeLabel, AlertStatusBadge, SeverityBadge } from "./alert-badges";

export interface AlertRowView {
  id: string;
  status: string;
  severity: string;
  rule_id?: string | null;
  rule_type: string;
  rule_name: string | null;
  subject_type: string;
  subject_id: string;
  subject_label: string;
  node_id: string | null;
  message: string;
  fired_at: string;
  resolved_at: string | null;
  acknowledged_by: string | null;
}

/** All alerts of one rule about one subject (or a single alert): the newest in front, the rest behind "× n". */
export interface AlertGroupView {
  key: string;
  count: number;
  firing: number;
  firstFiredAt: string;
  lastFiredAt: string;
  latest: AlertRowView;
  occurrences: AlertRowView[];
  silence: { kind: string; reason: string; endsAt: string } | null;
}

export function singleAlertGroups(alerts: AlertRowView[]): AlertGroupView[] {
  return alerts.map((a) => ({
    key: a.id,
    count: 1,
    firing: a.status === "firing" ? 1 : 0,
    firstFiredAt: a.fired_at,
    lastFiredAt: a.fired_at,
    latest: a,
    occurrences: [a],
    silence: null,
  }));
}

function subjectHref(a: AlertRowView, plane: "admin" | "tenant"): string | null {
  if (plane === "tenant")
    return a.subject_type === "job"
      ? `/dashboard/jobs/${a.subject_id}`
      : a.subject_type === "endpoint"
        ? `/dashboard/endpoints/${a.subject_id}`
        : a.subject_type === "pod"
          ? `/dashboard/pods/${a.subject_id}`
          : null;
  if (a.subject_type === "cluster") return `/admin/clusters/${a.subject_id}`;
  if (a.subject_type === "invoice") return `/admin/billing/invoices/${a.subject_id}`;
  if ((a.subject_type === "node" || a.subject_type === "gpu") && a.node_id) return `/admin/nodes/${a.node_id}`;
  if (a.subject_type === "job") return `/admin/jobs/${a.subject_id}`;
  if (a.subject_type === "endpoint") return `/admin/endpoints/${a.subject_id}`;
  if (a.subject_type === "pod") return `/admin/pods/${a.subject_id}`;
  return null;
}

/**
 * Alerts as operators and tenants read them, repeats grouped. Operators acknowledge what still
 * fires (a resolved alert needs nobody) and silence a rule's alerts about a subject for a while.
 */
export function AlertsTable({
  groups,
  plane,
  acknowledgeAction,
  silenceAction,
  caption = "Alerts",
}: {
  groups: AlertGroupView[];
  plane: "admin" | "tenant";
  acknowledgeAction?: FormAction;
  silenceAction?: FormAction;
  caption?: string;
}) {
  return (
    <Table caption={caption}>
      <thead className="bg-slate-50">
        <tr>
          <Th>Severity</Th>
          <Th>Status</Th>
          <Th>Alert</Th>
          <Th>Subject</Th>
          <Th>Last fired</Th>
          {acknowledgeAction ? <Th>Owner</Th> : null}
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {groups.map((g) => {
          const a = g.latest;
          const href = subjectHref(a, plane);
          return (
            <tr key={g.key} className="align-top" data-testid="alert-row">
              <Td>
                <SeverityBadge severity={a.severity} />
              </Td>
              <Td>
                <AlertStatusBadge status={a.status} />
                {a.resolved_at ? <p className="mt-1 text-xs text-slate-500">{formatRelative(a.resolved_at)}</p> : null}
                {g.silence ? (
                  <p className="mt-1">
                    <Badge tone="neutral">{g.silence.kind === "maintenance" ? "maintenance" : "silenced"}</Badge>
                  </p>
                ) : null}
              </Td>
              <Td wrap className="min-w-80 max-w-xl">
                <p className="font-medium text-slate-900">
                  {a.rule_name ?? alertTypeLabel(a.rule_type)}
                  {g.count > 1 ? (
                    <span
                      className="ml-2 rounded bg-slate-100 px-1.5 py-0.5 text-xs font-semibold text-slate-700"
                      title={`${g.count} alerts of this rule about this subject`}
                    >
                      × {g.count}
                    </span>
                  ) : null}
                </p>
                <p className="mt-0.5 text-slate-600">{a.message}</p>
                {g.silence ? (
                  <p className="mt-1 text-xs text-slate-500">
                    Nobody is notified until {formatDateTime(g.silence.endsAt)}: {g.silence.reason}
                  </p>
                ) : null}
                {g.count > 1 ? (
                  <details className="mt-1 text-xs text-slate-600">
                    <summary className="cursor-pointer text-indigo-700 hover:underline">
                      {g.firing ? `${g.firing} firing, ` : ""}
                      {g.count - g.firing} resolved since {formatDateTime(g.firstFiredAt)}
                    </summary>
                    <ol className="mt-2 space-y-1 border-l border-slate-200 pl-3">
                      {g.occurrences.map((o) => (
                        <li key={o.id}>
                          {plane === "admin" ? (
                            <Link className="hover:underline" href={`/admin/alerts?alert=${o.id}`}>
                              {formatDateTime(o.fired_at)}
                            </Link>
                          ) : (
                            formatDateTime(o.fired_at)
                          )}
                          {o.resolved_at ? ` → resolved ${formatDateTime(o.resolved_at)}` : " → firing"}
                        </li>
                      ))}
                      {g.count > g.occurrences.length ? (
                        <li>… and {g.count - g.occurrences.length} earlier (filter by date, or export CSV)</li>
                      ) : null}
                    </ol>
                  </details>
                ) : null}
              </Td>
              <Td>
                {href ? (
                  <Link className="font-medium text-indigo-700 hover:underline" href={href}>
                    {a.subject_label}
                  </Link>
                ) : (
                  a.subject_label
                )}
              </Td>
              <Td>
                <span title={formatDateTime(g.lastFiredAt)}>{formatRelative(g.lastFiredAt)}</span>
              </Td>
              {acknowledgeAction ? (
                <Td>
                  <div className="flex flex-col items-start gap-1.5">
                    {a.status !== "firing" ? (
                      <span className="text-xs text-slate-500">{a.acknowledged_by ? `Taken by ${a.acknowledged_by}` : "—"}</span>
                    ) : a.acknowledged_by ? (
                      <span className="text-xs text-slate-600">Taken by {a.acknowledged_by}</span>
                    ) : (
                      <InlineAction action={acknowledgeAction} fields={{ id: a.id }} label="Acknowledge" />
                    )}
                    {silenceAction && !g.silence && a.rule_id ? (
                      <SilenceForm
                        action={silenceAction}
                        alert={{
                          id: a.id,
                          label: a.subject_label,
                          ruleId: a.rule_id,
                          subjectType: a.subject_type,
                          subjectId: a.subject_id,
                        }}
                      />
                    ) : null}
                  </div>
                </Td>
              ) : null}
            </tr>
          );
        })}
      </tbody>
    </Table>
  );
}
