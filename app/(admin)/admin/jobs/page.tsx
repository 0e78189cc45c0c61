import { cancelJobAction, changeJobPriorityAction } from "@/app/_actions/jobs";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { JobsTable, toJobItems } from "@/components/shell/jobs-table";
import { Card, CardHeader, PageHeader, Stat } from "@/components/ui/card";
import { FilterCard } from "@/components/ui/filter-card";
import { ListToolbar, Pager } from "@/components/ui/list-toolbar";
import { listHref, readListParams } from "@/lib/http/list-params";
import { mayCancelJob } from "@/lib/jobs/job-permissions";
import { listJobsPage } from "@/lib/jobs/list-jobs";
import { jobListParams } from "@/lib/jobs/schemas";
import { fleetGpuTypes, jobCounts } from "@/lib/jobs/queries";
import { listTenantsWithCounts } from "@/lib/tenants/queries";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Queue" };

const STATUS_OPTIONS: Array<[string, string]> = [
  ["active", "Running or waiting"],
  ["running", "Running"],
  ["waiting", "Waiting (queued or blocked)"],
  ["queued", "Queued"],
  ["blocked", "Blocked"],
  ["completed", "Completed"],
  ["failed", "Failed"],
  ["cancelled", "Cancelled"],
  ["any", "Any status"],
];
const SORT_OPTIONS: Array<[string, string]> = [
  ["queue", "Queue order (priority, then age)"],
  ["newest", "Newest first"],
  ["oldest", "Oldest first"],
  ["gpus", "Most GPUs"],
  ["name", "Name"],
];

export default page({ plane: "operator", path: "/admin/jobs" }, async ({ principal: p, searchParams: sp }) => {
  // the queue opens on what runs and what waits, as squeue does, in scheduling order; "any status" is an explicit choice
  const status = sp.status || "active";
  const q = readListParams(jobListParams, { ...sp, status: status === "any" ? undefined : status, sort: sp.sort || "queue" });
  const [page, counts, tenants, types] = await Promise.all([listJobsPage(p, q), jobCounts(), listTenantsWithCounts(), fleetGpuTypes()]);
  const values = { ...q, status: q.status ?? "any" };
  const href = (changes: Record<string, string | number | undefined>) => listHref("/admin/jobs", values, changes);
  const exportHref = listHref("/api/jobs/export", { ...q, page: undefined, per_page: undefined });
  return (
    <>
      <PageHeader
        title="Queue"
        description="Every tenant's work: what waits in scheduling order and why, what runs where. Filter, reorder waiting jobs, cancel, export."
        actions={<AutoRefresh seconds={10} />}
      />
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
        <FilterCard
          href={href({ status: "active", page: undefined })}
          active={status === "active"}
          label="Running or waiting"
          value={counts.running + counts.queued + counts.blocked}
          hint="What squeue shows"
        />
        <FilterCard
          href={href({ status: "running", page: undefined })}
          active={status === "running"}
          label="Running"
          value={counts.running}
        />
        <FilterCard
          href={href({ status: "waiting", page: undefined })}
          active={status === "waiting"}
          label="Waiting"
          value={counts.queued + counts.blocked}
          hint={`${counts.blocked} blocked (quota or billing)`}
        />
        <Stat label="Matching this view" value={page.total.toLocaleString("en-US")} />
      </div>
      <Card className="mt-6">
        <CardHeader
          title="Jobs"
          description="Priority 1 runs first; within a priority, fair share between tenants, then age. Changing a waiting job's priority is recorded in the audit log and the job's timeline."
        />
        <ListToolbar
          label="Filter jobs"
          base="/admin/jobs"
          values={values}
          search="Job name or id"
          selects={[
            { name: "status", label: "Status", options: STATUS_OPTIONS },
            { name: "tenant_id", label: "Tenant", options: [["", "Any tenant"], ...tenants.map((t): [string, string] => [t.id, t.name])] },
            { name: "gpu_type", label: "GPU type", options: [["", "Any type"], ...types.map((t): [string, string] => [t, t])] },
          ]}
          dates="Submitted"
          sort={SORT_OPTIONS}
          exportHref={exportHref}
        />
        <JobsTable
          plane="admin"
          jobs={toJobItems(page.rows, (j) => mayCancelJob(p, j))}
          cancelAction={cancelJobAction}
          priorityAction={changeJobPriorityAction}
        />
        <Pager page={q.page} perPage={q.per_page} total={page.total} href={(c) => href(c)} />
      </Card>
    </>
  );
});
