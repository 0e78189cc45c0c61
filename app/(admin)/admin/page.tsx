import Link from "next/link";
import { Suspense } from "react";
import { AuditList, toAuditViews } from "@/components/shell/audit-list";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { FleetUtilizationChart } from "@/components/fleet/charts";
import { FloorMap } from "@/components/fleet/floor-map";
import { SlurmClustersCard } from "@/components/slurm/slurm-views";
import { Card, CardHeader, EmptyState, PageHeader, Skeleton, Stat } from "@/components/ui/card";
import { firingAlertCounts } from "@/lib/alerts/queries";
import type { OperatorPrincipal } from "@/lib/auth/principal";
import { summarizeFloor } from "@/lib/fleet/floor-summary";
import { fleetFloor, fleetSince, fleetSummary } from "@/lib/fleet/queries";
import { fleetUtilizationSeries } from "@/lib/metrics/queries";
import { describeRange, describeStep, fittingPreset, parseTimeRange } from "@/lib/metrics/time-range";
import { TimeRangePicker } from "@/components/ui/time-range-picker";
import { operatorOverview } from "@/lib/platform/overview";
import { slurmClustersOverview } from "@/lib/slurm/queries";
import { page } from "@/lib/pages/page";
import { PageSkeleton } from "@/components/shell/page-skeleton";
import { ProviderFloor } from "@/components/providers/provider-floor";
import { providerFloor } from "@/lib/providers/provider-floor";

export const metadata = { title: "Fleet overview" };

// The figures and the chart come first; the floor and the activity below the fold stream in
// behind skeletons, so a large fleet's floor never holds up the top of the page.
export default page({ plane: "operator", path: "/admin", loading: <PageSkeleton /> }, async ({ principal: p, searchParams }) => {
  const now = new Date();
  const range = parseTimeRange(searchParams, now, fittingPreset("24h", await fleetSince(), now));
  const [fleet, series, alerts] = await Promise.all([fleetSummary(), fleetUtilizationSeries(range), firingAlertCounts(p)]);
  return (
    <>
      <PageHeader title="Fleet overview" description="Every GPU in every cluster, live." actions={<AutoRefresh seconds={10} />} />
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-5">
        <Link
          href="/admin/alerts"
          className="rounded-lg focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600"
        >
          <Stat
            label="Alerts firing"
            value={<span className={alerts.critical ? "text-red-700" : undefined}>{alerts.total}</span>}
            hint={`${alerts.critical} critical · ${alerts.warning} warning`}
          />
        </Link>
        <Stat label="GPUs" value={fleet.gpus_total} hint={`${fleet.gpus_allocated} allocated · ${fleet.gpus_schedulable} idle`} />
        <Stat label="Unhealthy GPUs" value={fleet.gpus_unhealthy} hint="Fatal XIDs, ECC, agent reports" />
        <Stat
          label="Avg utilization"
          value={fleet.utilization_avg_pct === null ? "—" : `${fleet.utilization_avg_pct} %`}
          hint="Last 5 minutes"
        />
        <Stat
          label="Nodes online"
          value={fleet.nodes_online}
          hint={`${fleet.nodes_offline} offline · ${fleet.nodes_quarantined} quarantined`}
        />
      </div>
      <Card className="mt-6" data-testid="utilization-chart" data-from={range.from.toISOString()} data-step={range.stepS}>
        <CardHeader
          title={`GPU utilization, ${describeRange(range)}`}
          description={`Fleet average of ${describeStep(range.stepS)} steps, UTC. Gaps are periods nobody reported.`}
          actions={<TimeRangePicker base="/admin" range={range} />}
        />
        <div className="p-5">
          {series.hasData ? (
            <FleetUtilizationChart points={series.points} />
          ) : (
            <EmptyState title="No metrics in this range">Agents report every few seconds once nodes are registered.</EmptyState>
          )}
        </div>
      </Card>
      <Card className="mt-6">
        <CardHeader title="Fleet floor" description="Racks by pod: a row per node, a cell per GPU. Select a rack for its nodes and GPUs." />
        <div className="p-5">
          <Suspense fallback={<FloorSkeleton />}>
            <Floor />
          </Suspense>
        </div>
      </Card>
      <Suspense fallback={null}>
        <RentedFloor />
        <SlurmFloor />
      </Suspense>
      <Suspense fallback={<ActivitySkeleton />}>
        <Activity p={p} />
      </Suspense>
    </>
  );
});

async function Floor() {
  const racks = await fleetFloor();
  if (racks.length === 0) {
    return (
      <EmptyState title="No nodes registered">
        Create an agent key for a cluster and start <code>npm run agent</code> on each GPU node.
      </EmptyState>
    );
  }
  return <FloorMap pods={summarizeFloor(racks)} />;
}

/** Provider clusters' nodes (issue 30): shown while anything is rented. */
async function RentedFloor() {
  const nodes = await providerFloor();
  if (nodes.length === 0) return null;
  return (
    <Card className="mt-6">
      <CardHeader
        title="Provider capacity"
        description="Nodes rented from GPU providers for jobs that waited beyond the burst threshold, with their hourly cost and our price."
      />
      <ProviderFloor nodes={nodes} />
    </Card>
  );
}

/** Slurm clusters with their partitions (none: nothing shown). */
async function SlurmFloor() {
  return <SlurmClustersCard clusters={await slurmClustersOverview()} />;
}

async function Activity({ p }: { p: OperatorPrincipal }) {
  const o = await operatorOverview(p);
  return (
    <>
      <div className="mt-6 grid gap-6 lg:grid-cols-3">
        <Stat label="Active tenants" value={o.tenantsActive} hint={`${o.quotaGranted} GPUs of quota granted`} />
        <Stat label="Clusters" value={o.clusters} hint={`${o.keysByScope.agent ?? 0} live agent keys`} />
        <Stat label="Users" value={o.users} />
      </div>
      <Card className="mt-6">
        <CardHeader
          title="Recent activity"
          actions={
            <Link className="text-sm font-medium text-indigo-700 hover:underline" href="/admin/audit">
              Full audit log
            </Link>
          }
        />
        <AuditList plane="admin" entries={toAuditViews(o.recent)} />
      </Card>
    </>
  );
}

function FloorSkeleton() {
  return (
    <div role="status" aria-label="Loading the fleet floor" className="space-y-4">
      <Skeleton className="h-4 w-2/3" />
      <div className="flex flex-wrap gap-2">
        {Array.from({ length: 12 }, (_, i) => (
          <Skeleton key={i} className="h-20 w-16" />
        ))}
      </div>
    </div>
  );
}

function ActivitySkeleton() {
  return (
    <div role="status" aria-label="Loading recent activity" className="mt-6 space-y-6">
      <div className="grid gap-6 lg:grid-cols-3">
        {[0, 1, 2].map((i) => (
          <Skeleton key={i} className="h-24" />
        ))}
      </div>
      <Skeleton className="h-64" />
    </div>
  );
}
