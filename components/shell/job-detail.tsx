import Link from "next/link";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { CancelJobButton, PriorityForm, ResubmitJobButton } from "@/components/forms/job-forms";
import type { FormAction } from "@/components/forms/use-action-form";
import { buttonClass } from "@/components/ui/button";
import { Card, CardHeader, PageHeader, Stat } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { formatCents, formatDuration } from "@/lib/billing/money";
import { JobStatus } from "./jobs-table";

export interface JobDetailView {
  id: string;
  name: string;
  status: string;
  gpuCount: number;
  gpuType: string;
  priority: number;
  durationS: number | null;
  maxRetries: number;
  attempts: number;
  failures: number;
  image: string | null;
  command: string | null;
  pendingReason: string | null;
  exitCode: number | null;
  error: string | null;
  submittedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;
const WAITING = ["queued", "blocked"];

/**
 * A job as its tenant and operators read it: what it runs (image, command), where (nodes, linked
 * for operators), what it has cost, why it waits, and every transition. Tenants clone or resubmit;
 * operators reorder it in the queue. Either may cancel it where allowed.
 */
export function JobDetail({
  job,
  plane,
  tenant,
  submittedBy,
  placement,
  cost,
  events,
  mayCancel,
  actions,
  notice,
  workload,
}: {
  job: JobDetailView;
  plane: "admin" | "tenant";
  tenant?: { id: string; name: string };
  submittedBy: string | null;
  placement: Array<{ id: string; hostname: string; gpuIndexes: number[] }>;
  cost: { total_cents: number; running_cents: number; cents_per_hour: number };
  events: Array<{ id: string; fromStatus: string | null; toStatus: string; reason: string; actor: string; createdAt: string }>;
  mayCancel: boolean;
  actions: { cancel: FormAction; resubmit?: FormAction; priority?: FormAction };
  /** the run's output and the GPUs it held, between what the job runs and its timeline */
  workload?: React.ReactNode;
  notice?: string;
}) {
  const admin = plane === "admin";
  const open = [...WAITING, "running"].includes(job.status);
  const ranFor = job.startedAt ? (job.finishedAt ? Date.parse(job.finishedAt) : Date.now()) - Date.parse(job.startedAt) : null;
  return (
    <>
      <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500">
        <Link href={admin ? "/admin/jobs" : "/dashboard/jobs"} className="hover:underline">
          {admin ? "Queue" : "Jobs"}
        </Link>{" "}
        / <span aria-current="page">{job.name}</span>
      </nav>
      <PageHeader
        title={job.name}
        description={`${plural(job.gpuCount, "GPU")} of type ${job.gpuType} · priority ${job.priority}${job.durationS ? ` · time limit ${formatDuration(job.durationS * 1000)}` : ""}${tenant ? ` · ${tenant.name}` : ""}`}
        actions={
          <div className="flex flex-wrap items-center gap-3">
            <JobStatus status={job.status} />
            {open && mayCancel ? (
              <CancelJobButton action={actions.cancel} id={job.id} name={job.name} running={job.status === "running"} />
            ) : null}
            {actions.resubmit ? (
              <Link className={buttonClass("secondary", "sm")} href={`/dashboard/jobs?clone=${job.id}#submit-job`}>
                Clone…
              </Link>
            ) : null}
            {actions.resubmit ? <ResubmitJobButton action={actions.resubmit} id={job.id} /> : null}
            {open ? <AutoRefresh seconds={5} /> : null}
          </div>
        }
      />
      {notice ? (
        <p role="status" className="mb-4 rounded-lg bg-emerald-50 px-4 py-3 text-sm text-emerald-900 ring-1 ring-emerald-200">
          {notice}
        </p>
      ) : null}
      {WAITING.includes(job.status) && job.pendingReason ? (
        <p role="status" className="mb-6 rounded-lg bg-sky-50 px-4 py-3 text-sm text-sky-900 ring-1 ring-sky-200">
          <strong>Why it waits:</strong> {job.pendingReason}
        </p>
      ) : null}
      {open && !mayCancel ? (
        <p className="mb-6 text-sm text-slate-600">
          Only an admin of your organisation, or the person who submitted it, can cancel this job.
        </p>
      ) : null}
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-5">
        <Stat
          label="Cost so far"
          value={formatCents(cost.total_cents)}
          hint={
            job.status === "running"
              ? `${formatCents(cost.running_cents)} of it not billed yet · ${formatCents(cost.cents_per_hour)} per hour`
              : "Billed per second of GPU time"
          }
        />
        <Stat label="Submitted" value={formatDateTime(job.submittedAt)} hint={submittedBy ? `by ${submittedBy}` : "through the API"} />
        <Stat
          label="Started"
          value={formatDateTime(job.startedAt)}
          hint={ranFor !== null ? `ran ${formatDuration(ranFor)}${job.finishedAt ? "" : " so far"}` : undefined}
        />
        <Stat
          label="Finished"
          value={formatDateTime(job.finishedAt)}
          hint={job.exitCode !== null ? `exit code ${job.exitCode}` : undefined}
        />
        <Stat label="Attempts" value={job.attempts} hint={`${job.failures} failed of ${job.maxRetries} retries allowed`} />
      </div>
      {admin && actions.priority && WAITING.includes(job.status) ? (
        <Card className="mt-6">
          <CardHeader
            title="Queue position"
            description="Priority 1 runs first. The change is recorded in the audit log and in this job's timeline."
          />
          <div className="flex items-center gap-3 p-5 text-sm text-slate-700">
            Priority <PriorityForm action={actions.priority} id={job.id} name={job.name} priority={job.priority} />
          </div>
        </Card>
      ) : null}
      <Card className="mt-6">
        <CardHeader
          title="What it runs"
          description={
            placement.length
              ? `${plural(job.gpuCount, "GPU")} on ${plural(placement.length, "node")}`
              : job.status === "running"
                ? undefined
                : WAITING.includes(job.status)
                  ? "Not placed yet"
                  : "Its GPUs were released when it ended"
          }
        />
        <dl className="grid gap-x-6 gap-y-4 p-5 text-sm sm:grid-cols-2">
          <div>
            <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">Image</dt>
            <dd className="mt-1 break-all font-mono text-xs text-slate-900">
              {job.image ?? <span className="font-sans text-slate-500">none: a local process with CUDA_VISIBLE_DEVICES on the node</span>}
            </dd>
          </div>
          <div>
            <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">Nodes</dt>
            <dd className="mt-1">
              {placement.length === 0 ? (
                <span className="text-slate-500">—</span>
              ) : (
                <ul className="space-y-1">
                  {placement.map((n) => (
                    <li key={n.id}>
                      {admin ? (
                        <Link className="font-medium text-indigo-700 hover:underline" href={`/admin/nodes/${n.id}`}>
                          {n.hostname}
                        </Link>
                      ) : (
                        <span className="font-medium">{n.hostname}</span>
                      )}
                      <span className="text-slate-500"> · GPU {n.gpuIndexes.join(", ")}</span>
                    </li>
                  ))}
                </ul>
              )}
            </dd>
          </div>
          <div className="sm:col-span-2">
            <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">Command</dt>
            <dd className="mt-1">
              {job.command ? (
                <pre tabIndex={0} aria-label="Command" className="overflow-x-auto rounded-md bg-slate-900 p-3 text-xs text-slate-100">
                  <code>{job.command}</code>
                </pre>
              ) : (
                <span className="text-slate-500">none: the image's own entry point</span>
              )}
            </dd>
          </div>
        </dl>
      </Card>
      {workload}
      <Card className="mt-6">
        <CardHeader title="Timeline" description="Every transition, with who and why." />
        <ol className="divide-y divide-slate-100">
          {events.map((e) => (
            <li key={e.id} className="flex flex-wrap items-center justify-between gap-2 px-5 py-3 text-sm">
              <span>
                {e.fromStatus && e.fromStatus !== e.toStatus ? (
                  <>
                    <JobStatus status={e.fromStatus} /> →{" "}
                  </>
                ) : null}
                <JobStatus status={e.toStatus} /> <span className="ml-2 text-slate-600">{e.reason}</span>{" "}
                <span className="text-slate-500">· {e.actor}</span>
              </span>
              <time className="text-xs text-slate-500" dateTime={e.createdAt}>
                {formatDateTime(e.createdAt)}
              </time>
            </li>
          ))}
        </ol>
        {job.error ? <p className="border-t border-slate-100 px-5 py-3 font-mono text-xs text-red-700">{job.error}</p> : null}
      </Card>
    </>
  );
}

export function toJobDetailView(j: {
  id: string;
  name: string;
  status: string;
  gpuCount: number;
  gpuType: string;
  priority: number;
  durationS: number | null;
  maxRetries: number;
  attempts: number;
  failures: number;
  image: string | null;
  command: string | null;
  pendingReason: string | null;
  exitCode: number | null;
  error: string | null;
  submittedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}): JobDetailView {
  return {
    ...j,
    submittedAt: j.submittedAt.toISOString(),
    startedAt: j.startedAt?.toISOString() ?? null,
    finishedAt: j.finishedAt?.toISOString() ?? null,
  };
}
