import { cancelJobAction, changeJobPriorityAction } from "@/app/_actions/jobs";
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
    plane: "operator",
    path: "/admin/jobs/[id]",
    ids: ["id"],
    load: async ({ principal, ids }) => {
      const data = await jobPageData(principal, ids.id);
      return data && { ...data, burst: await jobBurst(principal, ids.id) };
    },
  },
  ({ data }) => {
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
        workload={
          <>
            <JobBurstCard burst={data.burst} />
            <SlurmJobCard attempts={data.slurm} />
            <JobWorkload job={data.job} placements={data.placements} telemetry={data.telemetry} reservationsHref="/admin/reservations" />
          </>
        }
        actions={{ cancel: cancelJobAction, priority: changeJobPriorityAction }}
      />
    );
  },
);
