import { cancelJobAction, resubmitJobAction } from "@/app/_actions/jobs";
import { JobDetail, toJobDetailView } from "@/components/shell/job-detail";
import { SlurmJobCard } from "@/components/slurm/slurm-views";
import { JobWorkload } from "@/components/workloads/job-workload";
import { JobBurstCard } from "@/components/providers/job-burst";
import { jobPageData } from "@/lib/jobs/job-page";
import { jobBurst } from "@/lib/providers/queries";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Job" };

export default page(
  {
    plane: "tenant",
    path: "/dashboard/jobs/[id]",
    ids: ["id"],
    load: async ({ principal, ids }) => {
      const data = await jobPageData(principal, ids.id);
      return data && { ...data, burst: await jobBurst(principal, ids.id) };
    },
  },
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
            <JobBurstCard burst={data.burst} />
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
