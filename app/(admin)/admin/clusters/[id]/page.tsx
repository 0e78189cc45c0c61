import Link from "next/link";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { FleetUtilizationChart } from "@/components/fleet/charts";
import { FloorMap } from "@/components/fleet/floor-map";
import { SlurmClusterSection } from "@/components/slurm/slurm-views";
import { StatusBadge } from "@/components/fleet/node-status-badge";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { getClusterOrThrow } from "@/lib/fleet/cluster-queries";
import { summarizeFloor } from "@/lib/fleet/floor-summary";
import { fleetFloor, fleetSince, fleetSummary } from "@/lib/fleet/queries";
import { fleetUtilizationSeries } from "@/lib/metrics/queries";
import { describeRange, describeStep, fittingPreset, parseTimeRange } from "@/lib/metrics/time-range";
import { nullIfRefused } from "@/lib/errors";
import { page } from "@/lib/pages/page";
import { slurmClustersOverview } from "@/lib/slurm/queries";
import { TimeRangePicker } from "@/components/ui/time-range-picker";
import { putHandoverSettingsAction } from "@/app/_actions/handover";
import { HandoverSettingsForm } from "@/components/forms/attestation-forms";
import { listPolicies } from "@/lib/attestation/policy-queries";
import { getHandoverSettings } from "@/lib/handover/settings";

export const metadata = { title: "Cluster" };

export default page(
  {
    plane: "operator",
    path: "/admin/clusters/[id]",
    ids: ["id"],
    load: async ({ principal, ids: { id }, searchParams }) => {
      const cluster = await nullIfRefused(getClusterOrThrow(principal, id));
      if (!cluster) return null;
      const now = new Date();
      const range = parseTimeRange(searchParams, now, fittingPreset("24h", await fleetSince(id), now));
      const [summary, floor, series, slurm, handover, policies] = await Promise.all([
        fleetSummary(id),
        fleetFloor(id),
        fleetUtilizationSeries(range, id),
        cluster.kind === "slurm" ? slurmClustersOverview(id) : [],
        getHandoverSettings(principal, id),
        listPolicies(principal),
      ]);
      return {
        cluster,
        range,
        summary,
        floor,
        series,
        slurm: slurm[0] ?? null,
        handover,
        policies: policies.map((p) => ({ id: p.id, name: p.name, version: p.version })),
      };
    },
  },
  ({ ids: { id }, data: { cluster, range, summary, floor, series, slurm, handover, policies } }) => {
    const nodes = floor.flatMap((r) => r.nodes.map((n) => ({ ...n, pod: r.pod, rack: r.rack })));
    return (
      <>
        <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500">
          <Link href="/admin/clusters" className="hover:underline">
            Clusters
          </Link>{" "}
          / <span aria-current="page">{cluster.name}</span>
        </nav>
        <PageHeader
          title={cluster.name}
          description={
            [cluster.kind === "slurm" ? "Slurm cluster" : null, cluster.region, cluster.provider].filter(Boolean).join(" · ") || "Cluster"
          }
          actions={<AutoRefresh seconds={10} />}
        />
        <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
          <Stat label="GPUs" value={summary.gpus_total} hint={`${summary.gpus_schedulable} schedulable`} />
          <Stat label="Unhealthy GPUs" value={summary.gpus_unhealthy} />
          <Stat
            label="Avg utilization"
            value={summary.utilization_avg_pct === null ? "—" : `${summary.utilization_avg_pct} %`}
            hint="Last 5 minutes"
          />
          <Stat label="Nodes online" value={summary.nodes_online} hint={`${summary.nodes_offline} offline`} />
        </div>
        <Card className="mt-6" data-testid="utilization-chart" data-from={range.from.toISOString()} data-step={range.stepS}>
          <CardHeader
            title={`GPU utilization, ${describeRange(range)}`}
            description={`Cluster average of ${describeStep(range.stepS)} steps, UTC. Gaps are periods nobody reported.`}
            actions={<TimeRangePicker base={`/admin/clusters/${id}`} range={range} />}
          />
          <div className="p-5">
            {series.hasData ? <FleetUtilizationChart points={series.points} /> : <EmptyState title="No metrics in this range" />}
          </div>
        </Card>
        {slurm ? <SlurmClusterSection cluster={slurm} /> : null}
        <Card className="mt-6">
          <CardHeader title="Floor" description="Racks by pod: a row per node, a cell per GPU. Select a rack for its nodes and GPUs." />
          <div className="p-5">
            {floor.length ? <FloorMap pods={summarizeFloor(floor)} /> : <EmptyState title="No nodes registered in this cluster" />}
          </div>
        </Card>
        <Card className="mt-6">
          <CardHeader title={`Nodes (${nodes.length})`} />
          {nodes.length === 0 ? (
            <EmptyState title="No nodes yet">Start the agent on a GPU node with this cluster's agent key.</EmptyState>
          ) : (
            <Table caption="Nodes">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Hostname</Th>
                  <Th>Pod / rack</Th>
                  <Th>Status</Th>
                  <Th className="text-right">GPUs</Th>
                  <Th className="text-right">Unhealthy</Th>
                  <Th className="text-right">Busy (≥50 %)</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {nodes.map((n) => (
                  <tr key={n.id} className="hover:bg-slate-50">
                    <Td>
                      <Link className="font-medium text-indigo-700 hover:underline" href={`/admin/nodes/${n.id}`}>
                        {n.hostname}
                      </Link>
                    </Td>
                    <Td>
                      {n.pod} / {n.rack}
                    </Td>
                    <Td>
                      <StatusBadge status={n.status} />
                    </Td>
                    <Td className="text-right tabular-nums">{n.gpus.length}</Td>
                    <Td className="text-right tabular-nums">{n.gpus.filter((g) => g.status === "unhealthy").length}</Td>
                    <Td className="text-right tabular-nums">{n.gpus.filter((g) => (g.util ?? 0) >= 50).length}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </Card>
        <Card className="mt-6">
          <CardHeader
            title="Handover between tenants"
            description="When a whole-node tenancy ends, each node is released, wiped by its agent and attested with its TPM before it takes work again; a failure quarantines it."
          />
          <HandoverSettingsForm action={putHandoverSettingsAction} clusterId={id} settings={handover} policies={policies} />
        </Card>
        <p className="mt-4 text-xs text-slate-500">Registered {formatRelative(cluster.createdAt)}.</p>
      </>
    );
  },
);
