import { SiteViewsChart } from "@/components/fleet/charts";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { Table, Td, Th } from "@/components/ui/table";
import { siteAnalyticsOver } from "@/lib/marketing/site";
import { describeRange, describeStep, parseTimeRange } from "@/lib/metrics/time-range";
import { page } from "@/lib/pages/page";
import { TimeRangePicker } from "@/components/ui/time-range-picker";
import { PageSkeleton } from "@/components/shell/page-skeleton";

export const metadata = { title: "Site analytics" };

export default page({ plane: "operator", path: "/admin/analytics", loading: <PageSkeleton /> }, async ({ searchParams }) => {
  const range = parseTimeRange(searchParams, new Date(), "7d");
  const a = await siteAnalyticsOver(range);
  return (
    <>
      <PageHeader
        title="Site analytics"
        description={`First-party page views of the public site, ${describeRange(range)}. No cookies; visitors with Do Not Track or Global Privacy Control are not counted.`}
        actions={<TimeRangePicker base="/admin/analytics" range={range} />}
      />
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
        <Stat label="Page views" value={a.views.toLocaleString("en-US")} />
        <Stat label="Visitors" value={a.sessions.toLocaleString("en-US")} hint="Anonymous daily sessions" />
        <Stat label="Demo requests" value={a.demo_requests} hint={`${a.early_access} early-access signups`} />
        <Stat label="Conversion" value={a.conversion_pct === null ? "—" : `${a.conversion_pct} %`} hint="Demo requests per visitor" />
      </div>
      <Card className="mt-6">
        <CardHeader title={`Views and visitors, ${describeRange(range)}`} description={`Per ${describeStep(range.stepS)} step, UTC`} />
        <div className="p-5" data-testid="views-chart" data-step={range.stepS}>
          {a.views === 0 ? (
            <EmptyState title="No page views in this range">Views of the public pages are recorded as visitors arrive.</EmptyState>
          ) : (
            <SiteViewsChart rows={a.series} />
          )}
        </div>
      </Card>
      <div className="mt-6 grid gap-6 lg:grid-cols-2">
        <Card>
          <CardHeader title="Top pages" />
          {a.top_pages.length === 0 ? (
            <EmptyState title="No pages viewed yet" />
          ) : (
            <Table caption="Top pages">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Page</Th>
                  <Th className="text-right">Views</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {a.top_pages.map((p) => (
                  <tr key={p.path}>
                    <Td className="font-mono text-xs">{p.path}</Td>
                    <Td className="text-right tabular-nums">{p.views}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </Card>
        <Card>
          <CardHeader title="Referrers" />
          {a.referrers.length === 0 ? (
            <EmptyState title="No referrers yet" />
          ) : (
            <Table caption="Referrers">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Source</Th>
                  <Th className="text-right">Views</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {a.referrers.map((r) => (
                  <tr key={r.host}>
                    <Td>{r.host}</Td>
                    <Td className="text-right tabular-nums">{r.views}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </Card>
      </div>
    </>
  );
});
