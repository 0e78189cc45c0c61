import Link from "next/link";
import { cancelPipelineAction, retryStepAction } from "@/app/_actions/pipelines";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { CancelPipelineButton, RetryStepButton } from "@/components/pipelines/pipeline-controls";
import { PipelineDag } from "@/components/pipelines/pipeline-dag";
import { WorkflowLog } from "@/components/pipelines/workflow-log";
import { JobStatus } from "@/components/shell/jobs-table";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { page } from "@/lib/pages/page";
import { stepLoop } from "@/lib/pipelines/present";
import { pipelinePageData } from "@/lib/pipelines/pipeline-page";

export const metadata = { title: "Pipeline" };

function stepDetail(
  s: { status: string; iteration: number; callAttempt: number; kind: string },
  loop: ReturnType<typeof stepLoop>,
  inLoop: { max: number } | undefined,
) {
  const parts: string[] = [];
  if (loop)
    parts.push(
      s.status === "completed"
        ? `${s.iteration} iteration${s.iteration === 1 ? "" : "s"}`
        : `iteration ${s.iteration + 1} of ${loop.until ? "≤ " : ""}${loop.max}`,
    );
  else if (inLoop) parts.push(`iteration ${s.iteration + 1}`);
  if (s.kind !== "job" && s.callAttempt > 1) parts.push(`attempt ${s.callAttempt}`);
  return parts.join(" · ") || undefined;
}

export default page(
  { plane: "tenant", path: "/dashboard/pipelines/[id]", ids: ["id"], load: ({ principal, ids }) => pipelinePageData(principal, ids.id) },
  ({ data: { pipeline, outputs, log, depth, loopOfStep, running } }) => {
    return (
      <>
        <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500">
          <Link href="/dashboard/pipelines" className="hover:underline">
            Pipelines
          </Link>
        </nav>
        <PageHeader
          title={pipeline.name}
          description={`${pipeline.steps.length} steps · submitted ${formatDateTime(pipeline.createdAt)}${pipeline.deadlineAt ? ` · deadline ${formatDateTime(pipeline.deadlineAt)}` : ""}${pipeline.reason ? ` · ${pipeline.reason}` : ""}`}
          actions={
            <div className="flex flex-wrap items-center gap-4">
              <span data-testid="pipeline-status">
                <JobStatus status={pipeline.status} />
              </span>
              {running ? <CancelPipelineButton action={cancelPipelineAction} id={pipeline.id} name={pipeline.name} /> : null}
              <AutoRefresh seconds={3} />
            </div>
          }
        />
        <Card>
          <CardHeader title="Graph" description="Live status of every step; dashed arrows are loops." />
          <PipelineDag
            label={`Steps of ${pipeline.name} and their status`}
            nodes={pipeline.steps.map((s) => {
              const loop = stepLoop(s);
              return {
                name: s.name,
                kind: s.kind,
                dependsOn: s.dependsOn,
                depth: depth.get(s.name) ?? 0,
                status: s.status,
                detail: stepDetail(s, loop, loopOfStep.get(s.name)),
                loop: loop ? { from: loop.from, label: loop.until ? `until ${loop.until} · ≤ ${loop.max}` : `× ${loop.max}` } : null,
                href: `#step-${s.name}`,
              };
            })}
          />
        </Card>
        <Card className="mt-6">
          <CardHeader title="Steps" description="Each step's latest output; failed steps of a failed pipeline can be retried." />
          <ol className="divide-y divide-slate-100">
            {pipeline.steps.map((s) => {
              const out = outputs[s.name];
              return (
                <li key={s.name} id={`step-${s.name}`} data-testid={`step-row-${s.name}`} className="space-y-2 px-5 py-3 text-sm">
                  <div className="flex flex-wrap items-center justify-between gap-2">
                    <p className="flex flex-wrap items-center gap-2">
                      <code className="font-semibold text-slate-900">{s.name}</code>
                      <span className="text-xs text-slate-500">{s.kind === "job" ? `${s.gpuCount} × ${s.gpuType}` : s.kind}</span>
                      <JobStatus status={s.status} />
                      {s.jobId ? (
                        <Link className="text-xs font-medium text-indigo-700 hover:underline" href={`/dashboard/jobs/${s.jobId}`}>
                          job →
                        </Link>
                      ) : null}
                    </p>
                    {pipeline.status === "failed" && s.status === "failed" ? (
                      <RetryStepButton action={retryStepAction} id={pipeline.id} step={s.name} />
                    ) : null}
                  </div>
                  {s.error ? <p className="rounded bg-red-50 px-2 py-1 text-xs text-red-800">{s.error}</p> : null}
                  {out !== undefined ? (
                    <details className="rounded bg-slate-50 ring-1 ring-slate-200">
                      <summary className="cursor-pointer px-2 py-1 text-xs font-medium text-slate-700">
                        Output{s.iteration > 0 ? " (latest iteration)" : ""}
                      </summary>
                      <pre className="max-h-64 overflow-auto whitespace-pre-wrap break-all px-2 py-1 text-xs text-slate-800">
                        {JSON.stringify(out, null, 2)}
                      </pre>
                    </details>
                  ) : null}
                </li>
              );
            })}
          </ol>
        </Card>
        <Card className="mt-6">
          <CardHeader title="Workflow log" description="Every transition, iteration, output, tool call and retry, oldest first." />
          <WorkflowLog
            entries={log.map((e) => ({
              id: e.id.toString(),
              kind: e.kind,
              step: e.step,
              iteration: e.iteration,
              message: e.message,
              details: e.details as Record<string, unknown> | null,
              at: e.createdAt.toISOString(),
            }))}
          />
        </Card>
      </>
    );
  },
);
