import { ALERT_FILTERS } from "@/components/alerts/alert-filters";
import { AlertsTable } from "@/components/alerts/alerts-table";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { ListToolbar, Pager } from "@/components/ui/list-toolbar";
import { alertGroupJson, listAlertGroups } from "@/lib/alerts/list-alerts";
import { alertListParams } from "@/lib/alerts/schemas";
import { listHref, readListParams } from "@/lib/http/list-params";
import { page } from "@/lib/pages/page";
import { PageSkeleton } from "@/components/shell/page-skeleton";

export const metadata = { title: "Alerts" };

export default page({ plane: "tenant", path: "/dashboard/alerts", loading: <PageSkeleton /> }, async ({ principal: p, searchParams }) => {
  const q = readListParams(alertListParams, searchParams);
  const [firing, list] = await Promise.all([
    listAlertGroups(p, { ...alertListParams.parse({}), status: "firing", per_page: 100 }),
    listAlertGroups(p, q),
  ]);
  return (
    <>
      <PageHeader
        title="Alerts"
        description="What the platform noticed about your work: jobs moved off failed hardware, GPUs you hold that sit idle, endpoints missing their SLA."
      />
      <Card>
        <CardHeader title="Open" />
        {firing.groups.length === 0 ? (
          <EmptyState title="Nothing needs your attention" />
        ) : (
          <AlertsTable plane="tenant" groups={firing.groups.map((g) => alertGroupJson(g, p))} />
        )}
      </Card>
      <Card className="mt-6">
        <CardHeader title="History" description="Repeats of one alert about one job or endpoint are grouped." />
        <ListToolbar
          label="Filter alerts"
          base="/dashboard/alerts"
          values={q}
          search="Message or subject"
          selects={[
            { name: "status", label: "Status", options: ALERT_FILTERS.status },
            { name: "severity", label: "Severity", options: ALERT_FILTERS.severity },
            { name: "group", label: "Show", options: ALERT_FILTERS.group },
          ]}
          dates="Fired"
          sort={ALERT_FILTERS.sort}
          exportHref={listHref("/api/alerts/export", { ...q, page: undefined, per_page: undefined, group: undefined })}
        />
        {list.groups.length === 0 ? (
          <EmptyState title="No alerts match these filters" />
        ) : (
          <AlertsTable plane="tenant" groups={list.groups.map((g) => alertGroupJson(g, p))} />
        )}
        <Pager page={q.page} perPage={q.per_page} total={list.total} href={(c) => listHref("/dashboard/alerts", q, c)} />
      </Card>
    </>
  );
});
