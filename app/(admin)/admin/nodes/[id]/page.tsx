import Link from "next/link";
import { changeNodeStatusAction } from "@/app/_actions/nodes";
import { powerNodeAction, provisionNodeAction, removeBmcAction, saveBmcAction } from "@/app/_actions/bmc";
import { NodeProvisioning } from "@/components/fleet/node-provisioning";
import { nodeProvisioningSection } from "@/lib/provisioning/node-section";
import { retireIdentityAction, startHandoverAction } from "@/app/_actions/handover";
import { NodeHandoverCard } from "@/components/fleet/node-handover";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { NodeGpuChart } from "@/components/fleet/charts";
import { StatusBadge } from "@/components/fleet/node-status-badge";
import { NodeActions } from "@/components/forms/node-actions";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatDateTime, formatRelative } from "@/components/ui/format";
import { acknowledgeAlertAction } from "@/app/_actions/alerts";
import { AlertsTable, singleAlertGroups } from "@/components/alerts/alerts-table";
import { NodeWorkloadTable } from "@/components/fleet/node-workload";
import { NodeGpusTable, NodeReservationsCard, gpuStateCounts } from "@/components/fleet/node-gpus";
import { SlurmNodePanel } from "@/components/slurm/slurm-views";
import { slurmNodeView } from "@/lib/slurm/queries";
import { TimeRangePicker } from "@/components/ui/time-range-picker";
import { nodePageData } from "@/lib/fleet/node-page";
import { describeRange, describeStep, parseTimeRange } from "@/lib/metrics/time-range";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Node" };

export default page(
  {
    plane: "operator",
    path: "/admin/nodes/[id]",
    ids: ["id"],
    load: async ({ principal, ids, searchParams }) => {
      const range = parseTimeRange(searchParams, new Date(), "1h");
      const [data, slurm] = await Promise.all([nodePageData(principal, ids.id, range), slurmNodeView(ids.id)]);
      return data && { ...data, range, slurm, provisioning: await nodeProvisioningSection(principal, data.node) };
    },
  },
  ({
    ids: { id },
    data: {
      node,
      alerts,
      series,
      grid,
      workload,
      gpus,
      gpuCounts,
      health,
      allowed,
      impact,
      events,
      range,
      reservations,
      provisioning,
      slurm,
      handover,
    },
  }) => {
    return (
      <>
        <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500">
          <Link href="/admin/clusters" className="hover:underline">
            Clusters
          </Link>{" "}
          /{" "}
          <Link href={`/admin/clusters/${node.cluster.id}`} className="hover:underline">
            {node.cluster.name}
          </Link>
        </nav>
        <PageHeader
          title={node.hostname}
          description={`Pod ${node.pod ?? "—"} · rack ${node.rack ?? "—"} · ${node.cpuCores ?? "?"} cores · ${node.memoryGb ?? "?"} GB · agent ${node.agentVersion ?? "unknown"}`}
          actions={
            <div className="flex items-center gap-4">
              <StatusBadge status={node.status} />
              <AutoRefresh seconds={10} />
            </div>
          }
        />
        <div className="grid grid-cols-2 gap-4 lg:grid-cols-3">
          <Stat label="Health score" value={health.score} hint={health.reasons[0] ?? "No issues"} />
          <Stat label="GPUs" value={gpuCounts.present} hint={gpuStateCounts(gpus)} />
          <Stat
            label="Last heartbeat"
            value={formatRelative(node.lastHeartbeatAt)}
            hint={node.lastHeartbeatAt ? formatDateTime(node.lastHeartbeatAt) : "Never"}
          />
        </div>
        {alerts.length ? (
          <Card className="mt-6">
            <CardHeader
              title={`Firing alerts (${alerts.length})`}
              description="They resolve by themselves once the condition clears; a fatal XID clears when the node is returned to service."
            />
            <AlertsTable plane="admin" acknowledgeAction={acknowledgeAlertAction} groups={singleAlertGroups(alerts)} />
          </Card>
        ) : null}
        <Card className="mt-6">
          <CardHeader
            title="Lifecycle"
            description={
              node.status === "offline"
                ? `Offline; it returns to “${node.statusBeforeOffline}” on its next heartbeat.`
                : handover.dueSince && node.status !== "available"
                  ? "A handover is due: the node returns to service through one (Handover and attestation, below)."
                  : "Drain before maintenance; quarantine takes it out of service at once."
            }
          />
          <div className="p-5">
            <NodeActions action={changeNodeStatusAction} nodeId={node.id} hostname={node.hostname} allowed={[...allowed]} impact={impact} />
          </div>
        </Card>
        <NodeProvisioning
          nodeId={node.id}
          hostname={node.hostname}
          section={provisioning}
          actions={{ save: saveBmcAction, remove: removeBmcAction, power: powerNodeAction, provision: provisionNodeAction }}
        />
        {slurm ? <SlurmNodePanel slurm={slurm} status={node.status} /> : null}
        <NodeHandoverCard
          view={handover}
          nodeId={node.id}
          hostname={node.hostname}
          startAction={startHandoverAction}
          reenrolAction={retireIdentityAction}
        />
        <Card className="mt-6">
          <CardHeader
            title="Running here"
            description={`${workload.jobs.length} job${workload.jobs.length === 1 ? "" : "s"} and ${workload.replicas.length} endpoint replica${workload.replicas.length === 1 ? "" : "s"} hold this node's GPUs.`}
          />
          <NodeWorkloadTable workload={workload} />
        </Card>
        <div className="mt-6 flex flex-wrap items-center justify-between gap-3">
          <p className="text-sm text-slate-600">
            Charts: {describeRange(range)}, {describeStep(range.stepS)} averages per GPU, UTC. Gaps are periods the agent did not report.
          </p>
          <TimeRangePicker base={`/admin/nodes/${id}`} range={range} />
        </div>
        <div
          className="mt-4 grid gap-6 lg:grid-cols-2"
          data-testid="node-charts"
          data-from={range.from.toISOString()}
          data-step={range.stepS}
        >
          <Card>
            <CardHeader title={`GPU utilization, ${describeRange(range)}`} />
            <div className="p-5">
              {series.length ? <NodeGpuChart grid={grid} rows={series} metric="util" /> : <EmptyState title="No metrics in this range" />}
            </div>
          </Card>
          <Card>
            <CardHeader title={`GPU temperature, ${describeRange(range)}`} />
            <div className="p-5">
              {series.length ? <NodeGpuChart grid={grid} rows={series} metric="temp" /> : <EmptyState title="No metrics in this range" />}
            </div>
          </Card>
        </div>
        <NodeReservationsCard reservations={reservations} />
        <NodeGpusTable gpus={gpus} />
        <Card className="mt-6">
          <CardHeader title="Lifecycle history" />
          {events.length === 0 ? (
            <EmptyState title="No transitions yet" />
          ) : (
            <ol className="divide-y divide-slate-100">
              {events.map((ev) => (
                <li key={String(ev.id)} className="flex items-center justify-between gap-4 px-5 py-3 text-sm">
                  <span>
                    <StatusBadge status={ev.fromStatus} /> → <StatusBadge status={ev.toStatus} />{" "}
                    <span className="ml-2 text-slate-600">{ev.reason}</span> <span className="text-slate-500">· {ev.actor}</span>
                  </span>
                  <time className="text-xs text-slate-500" dateTime={ev.createdAt.toISOString()}>
                    {formatDateTime(ev.createdAt)}
                  </time>
                </li>
              ))}
            </ol>
          )}
        </Card>
      </>
    );
  },
);
