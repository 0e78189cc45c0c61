import Link from "next/link";
import { InlineAction } from "@/components/forms/alert-forms";
import type { FormAction } from "@/components/forms/use-action-form";
import { formatDateTime, formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { ALERT_TYPE_LABELS, AlertStatusBadge, SeverityBadge } from "./alert-badges";

export interface AlertRowView {
  id: string;
  status: string;
  severity: string;
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

function subjectHref(a: AlertRowView, plane: "admin" | "tenant"): string | null {
  if (plane === "tenant") return a.subject_type === "job" ? `/dashboard/jobs/${a.subject_id}` : null;
  if (a.subject_type === "cluster") return `/admin/clusters/${a.subject_id}`;
  if (a.subject_type === "invoice") return `/admin/billing/invoices/${a.subject_id}`;
  if ((a.subject_type === "node" || a.subject_type === "gpu") && a.node_id) return `/admin/nodes/${a.node_id}`;
  return null;
}

/** Alert events as operators and tenants read them; operators can acknowledge. */
export function AlertsTable({ alerts, plane, acknowledgeAction }: { alerts: AlertRowView[]; plane: "admin" | "tenant"; acknowledgeAction?: FormAction }) {
  return (
    <Table caption="Alerts">
      <thead className="bg-slate-50">
        <tr><Th>Severity</Th><Th>Status</Th><Th>Alert</Th><Th>Subject</Th><Th>Fired</Th>{acknowledgeAction ? <Th>Owner</Th> : null}</tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {alerts.map((a) => {
          const href = subjectHref(a, plane);
          return (
            <tr key={a.id} id={`alert-${a.id}`} className="align-top">
              <Td><SeverityBadge severity={a.severity} /></Td>
              <Td><AlertStatusBadge status={a.status} />{a.resolved_at ? <p className="mt-1 text-xs text-slate-500">{formatRelative(a.resolved_at)}</p> : null}</Td>
              <Td wrap className="min-w-80 max-w-xl">
                <p className="font-medium text-slate-900">{a.rule_name ?? ALERT_TYPE_LABELS[a.rule_type] ?? a.rule_type}</p>
                <p className="mt-0.5 text-slate-600">{a.message}</p>
              </Td>
              <Td>{href ? <Link className="font-medium text-indigo-700 hover:underline" href={href}>{a.subject_label}</Link> : a.subject_label}</Td>
              <Td><span title={formatDateTime(a.fired_at)}>{formatRelative(a.fired_at)}</span></Td>
              {acknowledgeAction ? (
                <Td>{a.acknowledged_by ? <span className="text-xs text-slate-600">Taken by {a.acknowledged_by}</span> : <InlineAction action={acknowledgeAction} fields={{ id: a.id }} label="Acknowledge" />}</Td>
              ) : null}
            </tr>
          );
        })}
      </tbody>
    </Table>
  );
}
