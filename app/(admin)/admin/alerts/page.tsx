import Link from "next/link";
import { acknowledgeAlertAction } from "@/app/_actions/alerts";
import { ALERT_TYPE_LABELS } from "@/components/alerts/alert-badges";
import { AlertsNav } from "@/components/alerts/alerts-nav";
import { AlertsTable } from "@/components/alerts/alerts-table";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { OlderLink } from "@/components/ui/list-nav";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { AlertStatusBadge, SeverityBadge } from "@/components/alerts/alert-badges";
import { formatDateTime } from "@/components/ui/format";
import { alertJson, firingAlertCounts, getAlertOrThrow, listAlerts, remediationCapStatus } from "@/lib/alerts/queries";
import { listAlertsQuery } from "@/lib/alerts/schemas";
import { requireOperatorPage } from "@/lib/auth/session";

export const metadata = { title: "Alerts" };

const selectClass = "rounded-md bg-white px-2.5 py-1.5 text-sm ring-1 ring-slate-300 focus:ring-2 focus:ring-indigo-600";

export default async function AlertsPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const p = await requireOperatorPage("/admin/alerts");
  const sp = await searchParams;
  // a hand-edited address falls back to the unfiltered view instead of an error page
  const parsed = listAlertsQuery.safeParse({ status: sp.status || undefined, severity: sp.severity || undefined, rule_type: sp.rule_type || undefined, cursor: sp.cursor || undefined, limit: 50 });
  const filters = parsed.success ? parsed.data : { limit: 50 };
  const filtered = Boolean(filters.status || filters.severity || filters.rule_type);
  const focusId = sp.alert && /^[0-9a-f-]{36}$/i.test(sp.alert) ? sp.alert : undefined;
  const [focus, firingNow, counts, cap, recent] = await Promise.all([
    focusId ? getAlertOrThrow(p, focusId).then((a) => alertJson(a, p), () => null) : null,
    filtered || filters.cursor ? null : listAlerts(p, { limit: 100, status: "firing" }),
    firingAlertCounts(p),
    remediationCapStatus(),
    listAlerts(p, filtered ? filters : { ...filters, status: "resolved" }).catch(() => listAlerts(p, { limit: 50 })),
  ]);
  const unacked = firingNow?.data.filter((a) => !a.acknowledgedAt).length;
  const qs = (cursor: string) => new URLSearchParams({ ...Object.fromEntries(Object.entries({ status: filters.status, severity: filters.severity, rule_type: filters.rule_type }).filter(([, v]) => v) as Array<[string, string]>), cursor }).toString();
  return (
    <>
      <PageHeader title="Alerts" description="What fires now across the fleet, what resolved, and who is on it. Rules are evaluated every 15 seconds and as metrics arrive." actions={<AutoRefresh seconds={10} />} />
      <AlertsNav current="/admin/alerts" />
      {focus ? (
        <Card className="mb-6 ring-2 ring-indigo-200" aria-label="Selected alert">
          <CardHeader title={focus.rule_name ?? focus.rule_type} description={focus.message} actions={<div className="flex gap-2"><SeverityBadge severity={focus.severity} /><AlertStatusBadge status={focus.status} /></div>} />
          <dl className="grid gap-x-6 gap-y-2 p-5 text-sm sm:grid-cols-2 lg:grid-cols-3">
            <div><dt className="text-xs text-slate-500">Subject</dt><dd className="font-medium text-slate-900">{focus.subject_label}</dd></div>
            <div><dt className="text-xs text-slate-500">Fired</dt><dd>{formatDateTime(focus.fired_at)}</dd></div>
            <div><dt className="text-xs text-slate-500">Resolved</dt><dd>{formatDateTime(focus.resolved_at)}</dd></div>
            {Object.entries(focus.details).map(([k, v]) => (
              <div key={k}><dt className="text-xs text-slate-500">{k.replace(/_/g, " ")}</dt><dd className="font-mono text-xs text-slate-800">{typeof v === "object" ? JSON.stringify(v) : String(v)}</dd></div>
            ))}
          </dl>
        </Card>
      ) : null}
      <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
        <Stat label="Firing" value={counts.total} hint={`${counts.critical} critical · ${counts.warning} warning · ${counts.info} info`} />
        <Stat label="Unacknowledged" value={unacked ?? "—"} hint="Firing and nobody has taken them" />
        <Stat label="Automatic quarantines" value={`${cap.used} / ${cap.limit}`} hint={`Used of the cap in the last ${Math.round(cap.window_s / 60)} minutes`} />
        <Stat label="Critical" value={counts.critical} hint="Pages someone when notifications are on" />
      </div>
      {firingNow ? (
        <Card className="mt-6">
          <CardHeader title="Firing now" description="Most recent first. Acknowledge to show the team you are on it." />
          {firingNow.data.length === 0 ? (
            <EmptyState title="Nothing is firing">The fleet is within every enabled rule.</EmptyState>
          ) : (
            <AlertsTable plane="admin" acknowledgeAction={acknowledgeAlertAction} alerts={firingNow.data.map((a) => alertJson(a, p))} />
          )}
        </Card>
      ) : null}
      <Card className="mt-6">
        <CardHeader
          title={filtered ? "Matching alerts" : "Recently resolved"}
          actions={
            <form role="search" aria-label="Filter alerts" className="flex flex-wrap items-center gap-2">
              <label className="sr-only" htmlFor="filter-status">Status</label>
              <select id="filter-status" name="status" defaultValue={filters.status ?? ""} className={selectClass}>
                <option value="">Any status</option><option value="firing">Firing</option><option value="resolved">Resolved</option>
              </select>
              <label className="sr-only" htmlFor="filter-severity">Severity</label>
              <select id="filter-severity" name="severity" defaultValue={filters.severity ?? ""} className={selectClass}>
                <option value="">Any severity</option><option value="critical">Critical</option><option value="warning">Warning</option><option value="info">Info</option>
              </select>
              <label className="sr-only" htmlFor="filter-type">Type</label>
              <select id="filter-type" name="rule_type" defaultValue={filters.rule_type ?? ""} className={selectClass}>
                <option value="">Any type</option>
                {Object.entries(ALERT_TYPE_LABELS).map(([value, label]) => <option key={value} value={value}>{label}</option>)}
              </select>
              <button className="rounded-md bg-slate-900 px-3 py-1.5 text-sm font-medium text-white focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600">Filter</button>
              {filtered ? <Link href="/admin/alerts" className="text-sm text-slate-600 hover:underline">Clear</Link> : null}
            </form>
          }
        />
        {recent.data.length === 0 ? (
          <EmptyState title={filtered ? "No alerts match these filters" : "No resolved alerts yet"} />
        ) : (
          <AlertsTable plane="admin" acknowledgeAction={acknowledgeAlertAction} alerts={recent.data.map((a) => alertJson(a, p))} />
        )}
        <OlderLink label="Older alerts →" href={recent.nextCursor ? `/admin/alerts?${qs(recent.nextCursor)}` : null} />
      </Card>
    </>
  );
}
