import { notFound } from "next/navigation";
import { cancelJobAction, changeJobPriorityAction } from "@/app/_actions/jobs";
import { JobDetail, toJobDetailView } from "@/components/shell/job-detail";
import { JobWorkload } from "@/components/workloads/job-workload";
import { requireOperatorPage } from "@/lib/auth/session";
import { jobPageData } from "@/lib/jobs/job-page";

export const metadata = { title: "Job" };

export default async function AdminJobPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const p = await requireOperatorPage(`/admin/jobs/${id}`);
  const data = await jobPageData(p, id);
  if (!data) notFound();
  return (
    <JobDetail
      job={toJobDetailView(data.job)}
      plane="admin"
      tenant={data.tenant}
      submittedBy={data.submittedBy}
      placement={data.placement}
      cost={data.cost}
      events={data.events}
      mayCancel={data.mayCancel}
      workload={<JobWorkload job={data.job} placements={data.placements} telemetry={data.telemetry} reservationsHref="/admin/reservations" />}
      actions={{ cancel: cancelJobAction, priority: changeJobPriorityAction }}
    />
  );
}
