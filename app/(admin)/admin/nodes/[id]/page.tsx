import Link from "next/link";
import { notFound } from "next/navigation";
import { changeNodeStatusAction } from "@/app/_actions/nodes";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { NodeGpuChart } from "@/components/fleet/charts";
import { StatusBadge } from "@/components/fleet/node-status-badge";
import { NodeActions } from "@/components/forms/node-actions";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatDateTime, formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { acknowledgeAlertAction } from "@/app/_actions/alerts";
import { AlertsTable, singleAlertGroups } from "@/components/alerts/alerts-table";
import { alertJson } from "@/lib/alerts/alert-json";
import { listAlerts } from "@/lib/alerts/queries";
import { displayActor, resolveActors } from "@/lib/audit/actor-names";
import { requireOperatorPage } from "@/lib/auth/session";
import { env } from "@/lib/env";
import { describeUnhealthyReason } from "@/lib/fleet/gpu-health-reasons";
import { gpuHealth, nodeHealth } from "@/lib/fleet/health";
import { classifyXid } from "@/lib/fleet/xid-policy";
import { GPU_STATUSES, type NodeState, OPERATOR_TARGETS, transition } from "@/lib/fleet/node-lifecycle";
import { nodeDetail } from "@/lib/fleet/queries";
import { nodeGpuSeries } from "@/lib/metrics/queries";
import { bucketGrid, describeRange, describeStep, parseTimeRange } from "@/lib/metrics/time-range";
import { describeNodeImpact, nodeWorkload } from "@/lib/fleet/node-impact";
import { NodeWorkloadTable } from "@/components/fleet/node-workload";
import { TimeRangePicker } from "@/components/ui/time-range-picker";
import { isUuid } from "@/lib/ids";
import { oneOf } from "@/lib/vocabulary";

export const metadata = { title: "Node" };

export default async function NodePage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | undefined>> }) {
  const { id } = await params;
  const range = parseTimeRange(await searchParams, new Date(), "1h");
  const p = await requireOperatorPage(`/admin/nodes/${id}`);
  if (!isUuid(id)) notFound();
  const node = await nodeDetail(id);
  if (!node) notFound();
  const alerts = await listAlerts(p, { limit: 20, status: "firing", node_id: id });
  const series = await nodeGpuSeries(id, range);
  const grid = bucketGrid(range.from, range.to, range.stepS);
  const workload = nodeWorkload(node.gpus);
  const actors = await resolveActors({ labels: node.events.map((ev) => ev.actor) });
  const e = env();
  const limits = { warningC: e.GPU_TEMP_WARNING_C, criticalC: e.GPU_TEMP_CRITICAL_C };
  const lastTemp = new Map<number, number>();
  for (const r of await nodeGpuSeries(id, { from: new Date(Date.now() - 300_000), to: new Date(), stepS: 60 })) lastTemp.set(r.idx, r.temp);
  const gpus = node.gpus.map((g) => ({
    ...g,
    health: gpuHealth(
      {
        status: oneOf(GPU_STATUSES, g.status, "gpus.status"),
        temperatureC: lastTemp.get(g.index) ?? null,
        recentXids: g.lastXid !== null ? [g.lastXid] : [],
        eccUncorrected: g.eccUncorrected,
        remapFailure: g.remapFailure,
      },
      limits,
    ),
  }));
  const present = gpus.filter((g) => g.status !== "missing");
  const ageS = node.lastHeartbeatAt ? (Date.now() - node.lastHeartbeatAt.getTime()) / 1000 : null;
  const health = nodeHealth({ status: node.status, heartbeatAgeS: ageS, heartbeatIntervalS: e.AGENT_HEARTBEAT_INTERVAL_S, gpus: present.map((g) => g.health) });
  const state = { status: node.status, statusBeforeOffline: node.statusBeforeOffline } as NodeState;
  const allowed = OPERATOR_TARGETS.filter((t) => {
    const r = transition(state, { kind: "operator", target: t });
    return r.ok && (r.changed || r.state.statusBeforeOffline !== state.statusBeforeOffline);
  });
  return (
    <>
      <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500">
        <Link href="/admin/clusters" className="hover:underline">Clusters</Link> / <Link href={`/admin/clusters/${node.cluster.id}`} className="hover:underline">{node.cluster.name}</Link>
      </nav>
      <PageHeader
        title={node.hostname}
        description={`Pod ${node.pod ?? "—"} · rack ${node.rack ?? "—"} · ${node.cpuCores ?? "?"} cores · ${node.memoryGb ?? "?"} GB · agent ${node.agentVersion ?? "unknown"}`}
        actions={<div className="flex items-center gap-4"><StatusBadge status={node.status} /><AutoRefresh seconds={10} /></div>}
      />
      <div className="grid gap-4 sm:grid-cols-3">
        <Stat label="Health score" value={health.score} hint={health.reasons[0] ?? "No issues"} />
        <Stat label="GPUs" value={present.length} hint={`${present.filter((g) => g.status === "unhealthy").length} unhealthy · ${gpus.length - present.length} missing`} />
        <Stat label="Last heartbeat" value={formatRelative(node.lastHeartbeatAt)} hint={node.lastHeartbeatAt ? formatDateTime(node.lastHeartbeatAt) : "Never"} />
      </div>
      {alerts.data.length ? (
        <Card className="mt-6">
          <CardHeader title={`Firing alerts (${alerts.data.length})`} description="They resolve by themselves once the condition clears; a fatal XID clears when the node is returned to service." />
          <AlertsTable plane="admin" acknowledgeAction={acknowledgeAlertAction} groups={singleAlertGroups(alerts.data.map((a) => alertJson(a, p)))} />
        </Card>
      ) : null}
      <Card className="mt-6">
        <CardHeader title="Lifecycle" description={node.status === "offline" ? `Offline; it returns to “${node.statusBeforeOffline}” on its next heartbeat.` : "Drain before maintenance; quarantine takes it out of service at once."} />
        <div className="p-5">
          <NodeActions action={changeNodeStatusAction} nodeId={node.id} hostname={node.hostname} allowed={[...allowed]} impact={Object.fromEntries(allowed.map((t) => [t, describeNodeImpact(t, workload)]))} />
        </div>
      </Card>
      <Card className="mt-6">
        <CardHeader title="Running here" description={`${workload.jobs.length} job${workload.jobs.length === 1 ? "" : "s"} and ${workload.replicas.length} endpoint replica${workload.replicas.length === 1 ? "" : "s"} hold this node's GPUs.`} />
        <NodeWorkloadTable workload={workload} />
      </Card>
      <div className="mt-6 flex flex-wrap items-center justify-between gap-3">
        <p className="text-sm text-slate-600">Charts: {describeRange(range)}, {describeStep(range.stepS)} averages per GPU, UTC. Gaps are periods the agent did not report.</p>
        <TimeRangePicker base={`/admin/nodes/${id}`} range={range} />
      </div>
      <div className="mt-4 grid gap-6 lg:grid-cols-2" data-testid="node-charts" data-from={range.from.toISOString()} data-step={range.stepS}>
        <Card>
          <CardHeader title={`GPU utilization, ${describeRange(range)}`} />
          <div className="p-5">{series.length ? <NodeGpuChart grid={grid} rows={series} metric="util" /> : <EmptyState title="No metrics in this range" />}</div>
        </Card>
        <Card>
          <CardHeader title={`GPU temperature, ${describeRange(range)}`} />
          <div className="p-5">{series.length ? <NodeGpuChart grid={grid} rows={series} metric="temp" /> : <EmptyState title="No metrics in this range" />}</div>
        </Card>
      </div>
      <Card className="mt-6">
        <CardHeader title="GPUs" />
        {gpus.length === 0 ? (
          <EmptyState title="This node reported no GPUs" />
        ) : (
          <Table caption="GPUs">
            <thead className="bg-slate-50"><tr><Th>#</Th><Th>Model</Th><Th>UUID</Th><Th>Memory</Th><Th>Status</Th><Th>Held by</Th><Th className="text-right">Health</Th><Th>Why</Th></tr></thead>
            <tbody className="divide-y divide-slate-100">
              {gpus.map((g) => (
                <tr key={g.id}>
                  <Td className="tabular-nums">{g.index}</Td>
                  <Td>{g.model ?? g.gpuType}</Td>
                  <Td className="font-mono text-xs">{g.uuid}</Td>
                  <Td className="tabular-nums">{Math.round(g.memoryTotalMb / 1024)} GiB</Td>
                  <Td><StatusBadge status={g.status} /></Td>
                  <Td className="text-xs">
                    {g.allocatedJob ? <>job <Link className="text-indigo-700 underline" href={`/admin/jobs/${g.allocatedJob.id}`}>{g.allocatedJob.name}</Link> <span className="text-slate-500">· {g.allocatedJob.tenant.name}</span></>
                      : g.allocatedReplica ? <>endpoint <Link className="text-indigo-700 underline" href={`/admin/endpoints/${g.allocatedReplica.endpoint.id}`}>{g.allocatedReplica.endpoint.name}</Link> <span className="text-slate-500">· {g.allocatedReplica.endpoint.tenant.name}</span></>
                      : <span className="text-slate-500">free</span>}
                  </Td>
                  <Td className="text-right tabular-nums">{g.health.score}</Td>
                  <Td className="max-w-xs truncate text-xs text-slate-500">{g.unhealthyReason ? describeUnhealthyReason(g.unhealthyReason, (x) => classifyXid(x).name) : g.health.reasons.join("; ")}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
      <Card className="mt-6">
        <CardHeader title="Lifecycle history" />
        {node.events.length === 0 ? (
          <EmptyState title="No transitions yet" />
        ) : (
          <ol className="divide-y divide-slate-100">
            {node.events.map((ev) => (
              <li key={String(ev.id)} className="flex items-center justify-between gap-4 px-5 py-3 text-sm">
                <span><StatusBadge status={ev.fromStatus} /> → <StatusBadge status={ev.toStatus} /> <span className="ml-2 text-slate-600">{ev.reason}</span> <span className="text-slate-500">· {displayActor(actors.byLabel, ev.actor)}</span></span>
                <time className="text-xs text-slate-500" dateTime={ev.createdAt.toISOString()}>{formatDateTime(ev.createdAt)}</time>
              </li>
            ))}
          </ol>
        )}
      </Card>
    </>
  );
}
