import { cancelJobAction, submitJobAction } from "@/app/_actions/jobs";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { SubmitJobForm } from "@/components/forms/job-forms";
import { JobsTable } from "@/components/shell/jobs-table";
import { Card, CardHeader, PageHeader, Stat } from "@/components/ui/card";
import { requireTenantPage } from "@/lib/auth/session";
import { fleetGpuTypes, listJobs } from "@/lib/jobs/queries";
import { reservationsOpenTo } from "@/lib/reservations/queries";
import { getTenantOrThrow, tenantFigures } from "@/lib/tenants/queries";

export const metadata = { title: "Jobs" };

export default async function TenantJobsPage() {
  const p = await requireTenantPage("/dashboard/jobs");
  const [jobs, types, tenant, figures, reservations] = await Promise.all([listJobs(p, { limit: 200 }), fleetGpuTypes(), getTenantOrThrow(p, p.tenantId), tenantFigures(p.tenantId), reservationsOpenTo(p.tenantId)]);
  const counts = (s: string) => jobs.data.filter((j) => j.status === s).length;
  return (
    <>
      <PageHeader title="Jobs" description="Work scheduled onto the fleet's GPUs by priority and fair share within your quota." actions={<AutoRefresh seconds={5} />} />
      <div className="grid gap-4 sm:grid-cols-4">
        <Stat label="GPUs in use" value={`${figures.gpu_in_use} / ${tenant.gpuQuota}`} hint="Your quota" />
        <Stat label="Running" value={counts("running")} />
        <Stat label="Waiting" value={counts("queued") + counts("blocked")} hint={`${counts("blocked")} over quota`} />
        <Stat label="Finished" value={counts("completed") + counts("failed") + counts("cancelled")} hint={`${counts("failed")} failed`} />
      </div>
      <Card className="mt-6">
        <CardHeader title="Submit a job" />
        <SubmitJobForm
          action={submitJobAction}
          gpuTypes={types}
          reservations={reservations.map((r) => ({ id: r.id, label: `${r.nodeCount} × ${r.gpuType}, ${r.startsAt.toISOString().slice(5, 16).replace("T", " ")} – ${r.endsAt.toISOString().slice(5, 16).replace("T", " ")} UTC (${r.id.slice(0, 8)})` }))}
        />
      </Card>
      <Card className="mt-6">
        <CardHeader title="Your jobs" description="Newest first. Waiting jobs say why they wait." />
        <JobsTable
          hrefBase="/dashboard/jobs"
          cancelAction={cancelJobAction}
          jobs={jobs.data.map((j) => ({ id: j.id, name: j.name, status: j.status, gpuCount: j.gpuCount, gpuType: j.gpuType, priority: j.priority, pendingReason: j.pendingReason, submittedAt: j.submittedAt.toISOString() }))}
        />
      </Card>
    </>
  );
}
