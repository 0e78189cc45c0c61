import { cancelJobAction, resubmitJobAction } from "@/app/_actions/jobs";
import { JobDetail, toJobDetailView } from "@/components/shell/job-detail";
import { SlurmJobCard } from "@/components/slurm/slurm-views";
import { JobWorkload } from "@/components/workloads/job-workload";
import { jobPageData } from "@/lib/jobs/job-page";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Job" };

export default page(
  { plane: "tenant", path: "/dashboard/jobs/[id]", ids: ["id"], load: ({ principal, ids }) => jobPageData(principal, ids.id) },
  ({ data, searchParams: sp }) => {
    return (
      <JobDetail
        job={toJobDetailView(data.job)}
        plane="tenant"
        submittedBy={data.submittedBy}
        placement={data.placement}
        cost={data.cost}
        events={data.events}
        mayCancel={data.mayCancel}
        workload={
          <>
            <SlurmJobCard attempts={data.slurm} />
            <JobWorkload
              job={data.job}
              placements={data.placements}
              telemetry={data.telemetry}
              reservationsHref="/dashboard/reservations"
            />
          </>
        }
        actions={{ cancel: cancelJobAction, resubmit: resubmitJobAction }}
        notice={sp.resubmitted ? "Submitted again: this is the new job; the earlier one keeps its own history." : undefined}
      />
    );
  },
);
