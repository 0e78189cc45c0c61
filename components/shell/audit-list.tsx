import Link from "next/link";
import { EmptyState } from "@/components/ui/card";
import { formatDateTime, formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { isUuid } from "@/lib/ids";

export interface AuditEntryView {
  id: string;
  action: string;
  actorKind: string;
  actorName: string;
  actorDetail: string | null;
  targetType: string;
  targetId: string | null;
  targetName: string | null;
  details: Record<string, unknown>;
  requestId: string | null;
  createdAt: string;
}

/** Where an audit entry's object lives in each plane (null: nowhere to go, e.g. a deleted row or a tenant's view of fleet objects). */
function auditTargetHref(e: Pick<AuditEntryView, "targetType" | "targetId">, plane: "admin" | "tenant"): string | null {
  const id = e.targetId;
  if (plane === "tenant") {
    if (e.targetType === "job" && id) return `/dashboard/jobs/${id}`;
    if (e.targetType === "endpoint" && id) return `/dashboard/endpoints/${id}`;
    if (e.targetType === "invoice" && id) return `/dashboard/billing/invoices/${id}`;
    if (e.targetType === "user") return "/dashboard/users";
    if (e.targetType === "api_key") return "/dashboard/api-keys";
    if (e.targetType === "pipeline" && id) return `/dashboard/pipelines/${id}`;
    return null;
  }
  const byId: Record<string, string> = {
    tenant: "/admin/tenants",
    node: "/admin/nodes",
    cluster: "/admin/clusters",
    job: "/admin/jobs",
    endpoint: "/admin/endpoints",
    invoice: "/admin/billing/invoices",
    alert_rule: "/admin/alerts/rules",
  };
  if (byId[e.targetType] && isUuid(id)) return `${byId[e.targetType]}/${id}`;
  const fixed: Record<string, string> = {
    api_key: "/admin/api-keys",
    alert_silence: "/admin/alerts/silences",
    settings: "/admin/settings",
    gpu_rate: "/admin/billing",
    notification: "/admin/alerts/notifications",
    demo_request: "/admin/demo-requests",
  };
  return fixed[e.targetType] ?? null;
}

const label = (k: string) => k.replace(/_/g, " ");
const value = (v: unknown) =>
  v === null || v === undefined ? "—" : typeof v === "object" ? JSON.stringify(v) : String(v as string | number | boolean);

function Target({ e, plane }: { e: AuditEntryView; plane: "admin" | "tenant" }) {
  const href = auditTargetHref(e, plane);
  const text = e.targetName ?? (e.targetId ? `${e.targetId.slice(0, 8)}…` : "");
  return (
    <span>
      <span className="text-xs text-slate-500">{label(e.targetType)} </span>
      {href ? (
        <Link className="font-medium text-indigo-700 hover:underline" href={href}>
          {text || "open"}
        </Link>
      ) : (
        <span className="font-medium text-slate-800">{text}</span>
      )}
    </span>
  );
}

/** The full log: who (by name), what, which object (linked), and the entry's details on demand. */
export function AuditTable({ entries, plane }: { entries: AuditEntryView[]; plane: "admin" | "tenant" }) {
  if (entries.length === 0) return <EmptyState title="No entries match" />;
  return (
    <Table caption="Audit entries">
      <thead className="bg-slate-50">
        <tr>
          <Th>When</Th>
          <Th>Who</Th>
          <Th>What</Th>
          <Th>Object</Th>
          <Th>Details</Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {entries.map((e) => {
          const { by: _by, ...rest } = e.details;
          const fields = Object.entries(rest);
          return (
            <tr key={e.id} className="align-top" data-testid="audit-row">
              <Td>
                <span title={formatDateTime(e.createdAt)}>{formatDateTime(e.createdAt)}</span>
              </Td>
              <Td>
                <span title={e.actorDetail ?? undefined}>{e.actorName}</span>
                {e.actorDetail ? <p className="text-xs text-slate-500">{e.actorDetail}</p> : null}
              </Td>
              <Td>
                <span className="font-mono text-xs text-indigo-700">{e.action}</span>
              </Td>
              <Td>
                <Target e={e} plane={plane} />
              </Td>
              <Td wrap className="min-w-56 max-w-md">
                {fields.length === 0 ? (
                  <span className="text-xs text-slate-500">—</span>
                ) : (
                  <details className="text-xs">
                    <summary className="cursor-pointer text-slate-600 hover:text-slate-900">
                      {fields
                        .slice(0, 2)
                        .map(([k, v]) => `${label(k)}: ${value(v)}`)
                        .join(" · ")
                        .slice(0, 80)}
                      {fields.length > 2 ? " …" : ""}
                    </summary>
                    <dl className="mt-2 grid grid-cols-[max-content_1fr] gap-x-3 gap-y-1">
                      {fields.map(([k, v]) => (
                        <div key={k} className="contents">
                          <dt className="text-slate-500">{label(k)}</dt>
                          <dd className="break-all font-mono text-slate-800">{value(v)}</dd>
                        </div>
                      ))}
                      {e.requestId ? (
                        <div className="contents">
                          <dt className="text-slate-500">request</dt>
                          <dd className="font-mono text-slate-800">{e.requestId}</dd>
                        </div>
                      ) : null}
                    </dl>
                  </details>
                )}
              </Td>
            </tr>
          );
        })}
      </tbody>
    </Table>
  );
}

/** The short "recent activity" list of the home pages. */
export function AuditList({
  entries,
  plane,
  empty = "Nothing has happened yet.",
}: {
  entries: AuditEntryView[];
  plane: "admin" | "tenant";
  empty?: string;
}) {
  if (entries.length === 0) return <EmptyState title={empty} />;
  return (
    <ul className="divide-y divide-slate-100">
      {entries.map((e) => (
        <li key={e.id} className="flex flex-wrap items-center justify-between gap-2 px-5 py-3 text-sm">
          <span className="flex flex-wrap items-center gap-x-2">
            <span className="font-mono text-xs text-indigo-700">{e.action}</span>
            {e.targetName || e.targetId ? <Target e={e} plane={plane} /> : null}
            <span className="text-slate-600">
              by <span title={e.actorDetail ?? undefined}>{e.actorName}</span>
            </span>
          </span>
          <time className="shrink-0 text-xs text-slate-500" dateTime={e.createdAt}>
            {formatRelative(e.createdAt)}
          </time>
        </li>
      ))}
    </ul>
  );
}

/** Rows from describeEntries as plain props. */
export function toAuditViews(
  rows: Array<{
    id: bigint | string;
    action: string;
    actorKind: string;
    actorName: string;
    actorDetail: string | null;
    targetType: string;
    targetId: string | null;
    targetName: string | null;
    details: unknown;
    requestId: string | null;
    createdAt: Date;
  }>,
): AuditEntryView[] {
  return rows.map((r) => ({
    id: String(r.id),
    action: r.action,
    actorKind: r.actorKind,
    actorName: r.actorName,
    actorDetail: r.actorDetail,
    targetType: r.targetType,
    targetId: r.targetId,
    targetName: r.targetName,
    details: (r.details ?? {}) as Record<string, unknown>,
    requestId: r.requestId,
    createdAt: r.createdAt.toISOString(),
  }));
}
