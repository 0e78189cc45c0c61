import { cancelJobAction, submitJobAction } from "@/app/_actions/jobs";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { SubmitJobForm } from "@/components/forms/job-forms";
import { JobsTable, toJobItems } from "@/components/shell/jobs-table";
import { Card, CardHeader, PageHeader, Stat } from "@/components/ui/card";
import { FilterCard } from "@/components/ui/filter-card";
import { ListToolbar, Pager } from "@/components/ui/list-toolbar";
import { listRates } from "@/lib/billing/rates";
import { nullIfRefused } from "@/lib/errors";
import { listHref, readListParams } from "@/lib/http/list-params";
import { CANCEL_POLICY, mayCancelJob } from "@/lib/jobs/job-permissions";
import { listJobsPage } from "@/lib/jobs/list-jobs";
import { jobListParams } from "@/lib/jobs/schemas";
import { fleetGpuTypes, getJobOrThrow, jobCounts, jobFitContext } from "@/lib/jobs/queries";
import { reservationsOpenTo } from "@/lib/reservations/queries";
import { isUuid } from "@/lib/ids";
import { page } from "@/lib/pages/page";
import { GpusInUseStat } from "@/components/workloads/gpus-in-use";
import { buttonClass } from "@/components/ui/button";

export const metadata = { title: "Jobs" };

const STATUS_OPTIONS: Array<[string, string]> = [
  ["", "Any status"],
  ["waiting", "Waiting"],
  ["running", "Running"],
  ["active", "Waiting or running"],
  ["completed", "Completed"],
  ["failed", "Failed"],
  ["cancelled", "Cancelled"],
];
const SORT_OPTIONS: Array<[string, string]> = [
  ["newest", "Newest first"],
  ["oldest", "Oldest first"],
  ["queue", "Queue order"],
  ["gpus", "Most GPUs"],
  ["name", "Name"],
];

export default page({ plane: "tenant", path: "/dashboard/jobs" }, async ({ principal: p, searchParams: sp }) => {
  const q = readListParams(jobListParams, sp);
  const cloneId = isUuid(sp.clone) ? sp.clone : undefined;
  const [page, types, fit, rates, clone, counts, reservations] = await Promise.all([
    listJobsPage(p, q),
    fleetGpuTypes(),
    jobFitContext(p.tenantId),
    listRates(),
    cloneId ? nullIfRefused(getJobOrThrow(p, cloneId)) : null,
    jobCounts(p.tenantId),
    reservationsOpenTo(p.tenantId),
  ]);
  const href = (changes: Record<string, string | number | undefined>) => listHref("/dashboard/jobs", q, changes);
  return (
    <>
      <PageHeader
        title="Jobs"
        description="Work scheduled onto the fleet's GPUs by priority and fair share within your quota."
        actions={
          <div className="flex flex-wrap items-center gap-3">
            <a className={buttonClass("primary")} href="#submit-job">
              Submit a job
            </a>
            <AutoRefresh seconds={10} />
          </div>
        }
      />
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
        <GpusInUseStat figures={fit.figures} quota={fit.quota} />
        <FilterCard
          href={href({ status: "running", page: undefined })}
          active={q.status === "running"}
          label="Running"
          value={counts.running}
        />
        <FilterCard
          href={href({ status: "waiting", page: undefined })}
          active={q.status === "waiting"}
          label="Waiting"
          value={counts.queued + counts.blocked}
          hint={`${counts.blocked} over quota or billing`}
        />
        <Stat label="Matching this view" value={page.total.toLocaleString("en-US")} />
      </div>
      <Card className="mt-6">
        <CardHeader
          title={clone ? `Clone “${clone.name}”` : "Submit a job"}
          description={clone ? "Its settings are filled in; change what you need and submit." : undefined}
        />
        <SubmitJobForm
          key={clone?.id ?? "new"}
          action={submitJobAction}
          gpuTypes={types}
          fit={fit}
          rates={Object.fromEntries(rates.map((r) => [r.gpu_type, r.cents_per_hour]))}
          reservations={reservations.map((r) => ({
            id: r.id,
            label: `${r.nodeCount} × ${r.gpuType}, ${r.startsAt.toISOString().slice(5, 16).replace("T", " ")} – ${r.endsAt.toISOString().slice(5, 16).replace("T", " ")} UTC (${r.id.slice(0, 8)})`,
          }))}
          prefill={
            clone
              ? {
                  name: clone.name,
                  gpu_count: clone.gpuCount,
                  gpu_type: clone.gpuType,
                  priority: clone.priority,
                  max_retries: clone.maxRetries,
                  duration_s: clone.durationS,
                  image: clone.image,
                  command: clone.command,
                }
              : undefined
          }
        />
      </Card>
      <Card className="mt-6">
        <CardHeader title="Your organisation's jobs" description={`Waiting jobs say why they wait. ${CANCEL_POLICY}`} />
        <ListToolbar
          label="Filter jobs"
          base="/dashboard/jobs"
          values={q}
          search="Job name or id"
          selects={[
            { name: "status", label: "Status", options: STATUS_OPTIONS },
            { name: "gpu_type", label: "GPU type", options: [["", "Any type"], ...types.map((t): [string, string] => [t, t])] },
          ]}
          dates="Submitted"
          sort={SORT_OPTIONS}
          exportHref={listHref("/api/jobs/export", { ...q, page: undefined, per_page: undefined })}
        />
        <JobsTable plane="tenant" jobs={toJobItems(page.rows, (j) => mayCancelJob(p, j))} cancelAction={cancelJobAction} />
        <Pager page={q.page} perPage={q.per_page} total={page.total} href={(c) => href(c)} />
      </Card>
    </>
  );
});
