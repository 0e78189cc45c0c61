import { acknowledgeAlertAction, createSilenceAction } from "@/app/_actions/alerts";
import { ALERT_FILTERS } from "@/components/alerts/alert-filters";
import { AlertStatusBadge, SeverityBadge } from "@/components/alerts/alert-badges";
import { AlertsNav } from "@/components/alerts/alerts-nav";
import { AlertsTable } from "@/components/alerts/alerts-table";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { ListToolbar, Pager } from "@/components/ui/list-toolbar";
import { alertGroupJson, listAlertGroups } from "@/lib/alerts/list-alerts";
import { alertListParams } from "@/lib/alerts/schemas";
import { alertJson } from "@/lib/alerts/alert-json";
import { firingAlertCounts, getAlertOrThrow, remediationCapStatus } from "@/lib/alerts/queries";
import { listHref, readListParams } from "@/lib/http/list-params";
import { isUuid } from "@/lib/ids";
import { page } from "@/lib/pages/page";
import { PageSkeleton } from "@/components/shell/page-skeleton";

export const metadata = { title: "Alerts" };

export default page({ plane: "operator", path: "/admin/alerts", loading: <PageSkeleton /> }, async ({ principal: p, searchParams: sp }) => {
  const q = readListParams(alertListParams, sp);
  const focusId = isUuid(sp.alert) ? sp.alert : undefined;
  const [focus, firingNow, list, counts, cap] = await Promise.all([
    focusId
      ? getAlertOrThrow(p, focusId).then(
          (a) => alertJson(a, p),
          () => null,
        )
      : null,
    listAlertGroups(p, { ...alertListParams.parse({}), status: "firing", per_page: 100, sort: "severity" }),
    listAlertGroups(p, q),
    firingAlertCounts(p),
    remediationCapStatus(),
  ]);
  const unacked = firingNow.groups.filter((g) => !g.latest.acknowledgedAt).length;
  const silenced = firingNow.groups.filter((g) => g.silence).length;
  return (
    <>
      <PageHeader
        title="Alerts"
        description="What fires now across the fleet, what resolved, and who is on it. Rules are evaluated every 15 seconds and as metrics arrive."
        actions={<AutoRefresh seconds={10} />}
      />
      <AlertsNav current="/admin/alerts" />
      {focus ? (
        <Card className="mb-6 ring-2 ring-indigo-200" aria-label="Selected alert">
          <CardHeader
            title={focus.rule_name ?? focus.rule_type}
            description={focus.message}
            actions={
              <div className="flex gap-2">
                <SeverityBadge severity={focus.severity} />
                <AlertStatusBadge status={focus.status} />
              </div>
            }
          />
          <dl className="grid gap-x-6 gap-y-2 p-5 text-sm sm:grid-cols-2 lg:grid-cols-3">
            <div>
              <dt className="text-xs text-slate-500">Subject</dt>
              <dd className="font-medium text-slate-900">{focus.subject_label}</dd>
            </div>
            <div>
              <dt className="text-xs text-slate-500">Fired</dt>
              <dd>{formatDateTime(focus.fired_at)}</dd>
            </div>
            <div>
              <dt className="text-xs text-slate-500">Resolved</dt>
              <dd>{formatDateTime(focus.resolved_at)}</dd>
            </div>
            {Object.entries(focus.details).map(([k, v]) => (
              <div key={k}>
                <dt className="text-xs text-slate-500">{k.replace(/_/g, " ")}</dt>
                <dd className="font-mono text-xs text-slate-800">
                  {typeof v === "object" ? JSON.stringify(v) : String(v as string | number | boolean)}
                </dd>
              </div>
            ))}
          </dl>
        </Card>
      ) : null}
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
        <Stat label="Firing" value={counts.total} hint={`${counts.critical} critical · ${counts.warning} warning · ${counts.info} info`} />
        <Stat label="Unacknowledged" value={unacked} hint="Firing and nobody has taken them" />
        <Stat label="Silenced" value={silenced} hint="Firing, but a silence or maintenance window keeps them quiet" />
        <Stat
          label="Automatic quarantines"
          value={`${cap.used} / ${cap.limit}`}
          hint={`Used of the cap in the last ${Math.round(cap.window_s / 60)} minutes`}
        />
      </div>
      <Card className="mt-6">
        <CardHeader
          title="Firing now"
          description="Most severe first; repeats of one rule about one subject are one row. Acknowledge to show you are on it; silence what you already know about."
        />
        {firingNow.groups.length === 0 ? (
          <EmptyState title="Nothing is firing">The fleet is within every enabled rule.</EmptyState>
        ) : (
          <AlertsTable
            caption="Alerts firing now"
            plane="admin"
            acknowledgeAction={acknowledgeAlertAction}
            silenceAction={createSilenceAction}
            groups={firingNow.groups.map((g) => alertGroupJson(g, p))}
          />
        )}
      </Card>
      <Card className="mt-6">
        <CardHeader title="All alerts" description="Search, filter, and export what fired and when." />
        <ListToolbar
          label="Filter alerts"
          base="/admin/alerts"
          values={q}
          search="Message or subject"
          selects={[
            { name: "status", label: "Status", options: ALERT_FILTERS.status },
            { name: "severity", label: "Severity", options: ALERT_FILTERS.severity },
            { name: "rule_type", label: "Type", options: ALERT_FILTERS.type },
            { name: "group", label: "Show", options: ALERT_FILTERS.group },
          ]}
          dates="Fired"
          sort={ALERT_FILTERS.sort}
          exportHref={listHref("/api/alerts/export", { ...q, page: undefined, per_page: undefined, group: undefined })}
        />
        {list.groups.length === 0 ? (
          <EmptyState title="No alerts match these filters" />
        ) : (
          <AlertsTable
            caption="All alerts"
            plane="admin"
            acknowledgeAction={acknowledgeAlertAction}
            silenceAction={createSilenceAction}
            groups={list.groups.map((g) => alertGroupJson(g, p))}
          />
        )}
        <Pager page={q.page} perPage={q.per_page} total={list.total} href={(c) => listHref("/admin/alerts", q, c)} />
      </Card>
    </>
  );
});
