import { notFound } from "next/navigation";
import { cancelJobAction, resubmitJobAction } from "@/app/_actions/jobs";
import { JobDetail, toJobDetailView } from "@/components/shell/job-detail";
import { JobWorkload } from "@/components/workloads/job-workload";
import { requireTenantPage } from "@/lib/auth/session";
import { jobPageData } from "@/lib/jobs/job-page";

export const metadata = { title: "Job" };

export default async function JobPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<{ resubmitted?: string }> }) {
  const { id } = await params;
  const p = await requireTenantPage(`/dashboard/jobs/${id}`);
  const data = await jobPageData(p, id);
  if (!data) notFound();
  const sp = await searchParams;
  return (
    <JobDetail
      job={toJobDetailView(data.job)}
      plane="tenant"
      submittedBy={data.submittedBy}
      placement={data.placement}
      cost={data.cost}
      events={data.events}
      mayCancel={data.mayCancel}
      workload={<JobWorkload job={data.job} placements={data.placements} telemetry={data.telemetry} reservationsHref="/dashboard/reservations" />}
      actions={{ cancel: cancelJobAction, resubmit: resubmitJobAction }}
      notice={sp.resubmitted ? "Submitted again: this is the new job; the earlier one keeps its own history." : undefined}
    />
  );
}
