import Link from "next/link";
import { notFound } from "next/navigation";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { JobStatus } from "@/components/shell/jobs-table";
import { PipelineGraph } from "@/components/shell/pipeline-graph";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { requireTenantPage } from "@/lib/auth/session";
import { isAppError } from "@/lib/errors";
import { depths } from "@/lib/pipelines/dag";
import { getPipelineOrThrow, pipelineLog } from "@/lib/pipelines/queries";

export const metadata = { title: "Pipeline" };

export default async function PipelinePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const p = await requireTenantPage(`/dashboard/pipelines/${id}`);
  if (!/^[0-9a-f-]{36}$/i.test(id)) notFound();
  const pipeline = await getPipelineOrThrow(p, id).catch((e) => (isAppError(e) ? null : Promise.reject(e)));
  if (!pipeline) notFound();
  const log = await pipelineLog(p, id);
  const depth = depths(pipeline.steps.map((s) => ({ name: s.name, depends_on: s.dependsOn })));
  return (
    <>
      <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500"><Link href="/dashboard/pipelines" className="hover:underline">Pipelines</Link></nav>
      <PageHeader title={pipeline.name} description={`${pipeline.steps.length} steps · submitted ${formatDateTime(pipeline.createdAt)}`} actions={<div className="flex items-center gap-4"><JobStatus status={pipeline.status} /><AutoRefresh seconds={5} /></div>} />
      <Card>
        <CardHeader title="Graph" />
        <PipelineGraph steps={pipeline.steps.map((s) => ({ name: s.name, dependsOn: s.dependsOn, status: s.status, jobId: s.jobId, iteration: s.iteration, repeat: s.repeat, depth: depth.get(s.name) ?? 0 }))} />
      </Card>
      <Card className="mt-6">
        <CardHeader title="Workflow log" />
        <ol className="divide-y divide-slate-100">
          {log.map((e) => (
            <li key={String(e.id)} className="flex items-center justify-between gap-4 px-5 py-2.5 text-sm">
              <span>{e.step ? <code className="mr-2 rounded bg-slate-100 px-1.5 text-xs">{e.step}</code> : null}{e.message}</span>
              <time className="shrink-0 text-xs text-slate-500" dateTime={e.createdAt.toISOString()}>{formatDateTime(e.createdAt)}</time>
            </li>
          ))}
        </ol>
      </Card>
    </>
  );
}
