import Link from "next/link";
import { AuditList, toAuditViews } from "@/components/shell/audit-list";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { FleetUtilizationChart } from "@/components/fleet/charts";
import { FleetFloor } from "@/components/fleet/fleet-floor";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { firingAlertCounts } from "@/lib/alerts/queries";
import { requireOperatorPage } from "@/lib/auth/session";
import { fleetFloor, fleetSummary } from "@/lib/fleet/queries";
import { fleetUtilizationSeries } from "@/lib/metrics/queries";
import { describeRange, describeStep, parseTimeRange } from "@/lib/metrics/time-range";
import { TimeRangePicker } from "@/components/ui/time-range-picker";
import { operatorOverview } from "@/lib/platform/overview";

export const metadata = { title: "Fleet overview" };

export default async function AdminHome({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const p = await requireOperatorPage("/admin");
  const range = parseTimeRange(await searchParams, new Date(), "24h");
  const [fleet, series, floor, o, alerts] = await Promise.all([fleetSummary(), fleetUtilizationSeries(range), fleetFloor(), operatorOverview(p), firingAlertCounts(p)]);
  return (
    <>
      <PageHeader title="Fleet overview" description="Every GPU in every cluster, live." actions={<AutoRefresh seconds={10} />} />
      <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-5">
        <Link href="/admin/alerts" className="rounded-lg focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600">
          <Stat label="Alerts firing" value={<span className={alerts.critical ? "text-red-700" : undefined}>{alerts.total}</span>} hint={`${alerts.critical} critical · ${alerts.warning} warning`} />
        </Link>
        <Stat label="GPUs" value={fleet.gpus_total} hint={`${fleet.gpus_allocated} allocated · ${fleet.gpus_schedulable} idle`} />
        <Stat label="Unhealthy GPUs" value={fleet.gpus_unhealthy} hint="Fatal XIDs, ECC, agent reports" />
        <Stat label="Avg utilization" value={fleet.utilization_avg_pct === null ? "—" : `${fleet.utilization_avg_pct} %`} hint="Last 5 minutes" />
        <Stat label="Nodes online" value={fleet.nodes_online} hint={`${fleet.nodes_offline} offline · ${fleet.nodes_quarantined} quarantined`} />
      </div>
      <Card className="mt-6" data-testid="utilization-chart" data-from={range.from.toISOString()} data-step={range.stepS}>
        <CardHeader
          title={`GPU utilization, ${describeRange(range)}`}
          description={`Fleet average of ${describeStep(range.stepS)} steps, UTC. Gaps are periods nobody reported.`}
          actions={<TimeRangePicker base="/admin" range={range} />}
        />
        <div className="p-5">
          {series.hasData ? <FleetUtilizationChart points={series.points} /> : <EmptyState title="No metrics in this range">Agents report every few seconds once nodes are registered.</EmptyState>}
        </div>
      </Card>
      <Card className="mt-6">
        <CardHeader title="Fleet floor" description="Nodes grouped by pod and rack; each square is a GPU. Select a node for details." />
        <div className="p-5">
          {floor.length === 0 ? (
            <EmptyState title="No nodes registered">
              Create an agent key for a cluster and start <code>npm run agent</code> on each GPU node.
            </EmptyState>
          ) : (
            <FleetFloor racks={floor} />
          )}
        </div>
      </Card>
      <div className="mt-6 grid gap-6 lg:grid-cols-3">
        <Stat label="Active tenants" value={o.tenantsActive} hint={`${o.quotaGranted} GPUs of quota granted`} />
        <Stat label="Clusters" value={o.clusters} hint={`${o.keysByScope.agent ?? 0} live agent keys`} />
        <Stat label="Users" value={o.users} />
      </div>
      <Card className="mt-6">
        <CardHeader title="Recent activity" actions={<Link className="text-sm font-medium text-indigo-700 hover:underline" href="/admin/audit">Full audit log</Link>} />
        <AuditList plane="admin" entries={toAuditViews(o.recent)} />
      </Card>
    </>
  );
}
