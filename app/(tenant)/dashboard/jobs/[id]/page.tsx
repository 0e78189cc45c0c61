import Link from "next/link";
import { notFound } from "next/navigation";
import { cancelJobAction } from "@/app/_actions/jobs";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { CancelJobButton } from "@/components/forms/job-forms";
import { JobStatus } from "@/components/shell/jobs-table";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { requireTenantPage } from "@/lib/auth/session";
import { isAppError } from "@/lib/errors";
import { HeldGpusCard, OutputCard } from "@/components/workloads/workload-sections";
import { getJobOrThrow, listJobEvents, listJobPlacements } from "@/lib/jobs/queries";
import { jobGpuTelemetry } from "@/lib/metrics/held-gpu-telemetry";
import { NodesByRack, TopologyLine } from "@/components/reservations/nodes-by-rack";
import { topologySummary } from "@/lib/scheduler/topology";

export const metadata = { title: "Job" };

export default async function JobPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const p = await requireTenantPage(`/dashboard/jobs/${id}`);
  if (!/^[0-9a-f-]{36}$/i.test(id)) notFound();
  const job = await getJobOrThrow(p, id).catch((e) => (isAppError(e) ? null : Promise.reject(e)));
  if (!job) notFound();
  const [events, placements, telemetry] = await Promise.all([listJobEvents(p, id), listJobPlacements(p, id), jobGpuTelemetry(p, id, {})]);
  const waiting = job.status === "queued" || job.status === "blocked";
  return (
    <>
      <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500"><Link href="/dashboard/jobs" className="hover:underline">Jobs</Link></nav>
      <PageHeader
        title={job.name}
        description={`${job.gpuCount} × ${job.gpuType} · priority ${job.priority}${job.durationS ? ` · ${job.durationS} s limit` : ""}`}
        actions={<div className="flex items-center gap-4"><JobStatus status={job.status} />{["queued", "blocked", "running"].includes(job.status) ? <CancelJobButton action={cancelJobAction} id={job.id} name={job.name} /> : null}<AutoRefresh seconds={5} /></div>}
      />
      {waiting && job.pendingReason ? (
        <p role="status" className="mb-6 rounded-lg bg-sky-50 px-4 py-3 text-sm text-sky-900 ring-1 ring-sky-200"><strong>Why it waits:</strong> {job.pendingReason}</p>
      ) : null}
      <div className="grid gap-4 sm:grid-cols-4">
        <Stat label="Attempts" value={job.attempts} hint={`${job.failures} failed of ${job.maxRetries} retries allowed`} />
        <Stat label="Submitted" value={formatDateTime(job.submittedAt)} />
        <Stat label="Started" value={formatDateTime(job.startedAt)} />
        <Stat label="Finished" value={formatDateTime(job.finishedAt)} hint={job.exitCode !== null ? `exit code ${job.exitCode}` : undefined} />
      </div>
      <Card className="mt-6">
        <CardHeader title="GPUs" description={job.gpus.length ? `${job.gpus.length} GPUs on ${new Set(job.gpus.map((g) => g.nodeId)).size} node(s)` : undefined} />
        {job.gpus.length === 0 ? <EmptyState title="No GPUs held right now" /> : (
          <ul className="flex flex-wrap gap-2 p-5">{job.gpus.map((g) => <li key={g.id}><code className="rounded bg-slate-100 px-2 py-1 text-xs">{g.id.slice(0, 8)}</code></li>)}</ul>
        )}
      </Card>
      {placements[0] ? (
        <Card className="mt-6">
          <CardHeader
            title="Topology"
            description={`Attempt ${placements[0].attempt}${placements[0].endedAt ? ` (${placements[0].endStatus})` : " (running)"}: a gang goes to one pod when it can, on the fewest racks.`}
            actions={placements[0].reservationId || job.reservationId ? <Link className="text-sm text-indigo-700 hover:underline" href={`/dashboard/reservations/${placements[0].reservationId ?? job.reservationId}`}>In reservation {(placements[0].reservationId ?? job.reservationId)!.slice(0, 8)}</Link> : undefined}
          />
          <div className="px-5 pt-4"><TopologyLine topology={topologySummary(placements[0].nodes.map((n) => ({ nodeId: n.node_id, clusterId: n.clusterId, pod: n.pod, rack: n.rack })))} /></div>
          <NodesByRack nodes={placements[0].nodes} />
        </Card>
      ) : job.reservationId ? (
        <p className="mt-6 text-sm text-slate-600">Runs only in <Link className="text-indigo-700 hover:underline" href={`/dashboard/reservations/${job.reservationId}`}>reservation {job.reservationId.slice(0, 8)}</Link>.</p>
      ) : null}
      <Card className="mt-6">
        <CardHeader title="Timeline" />
        <ol className="divide-y divide-slate-100">
          {events.map((e) => (
            <li key={String(e.id)} className="flex items-center justify-between gap-4 px-5 py-3 text-sm">
              <span>{e.fromStatus ? <><JobStatus status={e.fromStatus} /> → </> : null}<JobStatus status={e.toStatus} /> <span className="ml-2 text-slate-600">{e.reason}</span> <span className="text-slate-500">· {e.actor}</span></span>
              <time className="text-xs text-slate-500" dateTime={e.createdAt.toISOString()}>{formatDateTime(e.createdAt)}</time>
            </li>
          ))}
        </ol>
        {job.error ? <p className="border-t border-slate-100 px-5 py-3 font-mono text-xs text-red-700">{job.error}</p> : null}
      </Card>
      <OutputCard
        title="Output"
        description="stdout and stderr of each attempt's container, as its node ships them"
        sources={placements.map((pl) => ({ url: `/api/jobs/${job.id}/logs`, params: { attempt: String(pl.attempt) }, live: pl.endedAt === null }))}
        labels={placements.map((pl) => `Attempt ${pl.attempt} on ${pl.hostnames.join(", ")}${pl.endedAt ? ` (${pl.endStatus})` : " (running)"}`)}
        initial={0}
        emptyText={job.image || job.command ? "Nothing printed yet. Output appears here seconds after the container writes it." : "This job runs no image or command, so it prints nothing."}
      />
      <HeldGpusCard
        title="GPUs this job held"
        window={telemetry}
        series={telemetry.series.map((s) => ({ label: `GPU ${s.gpu_index ?? "?"} on ${s.hostname ?? "?"} · attempt ${s.attempt}`, points: s.points }))}
        emptyText={placements.length ? "The node has not reported samples for these GPUs yet." : "The job has not run yet."}
      />
    </>
  );
}
