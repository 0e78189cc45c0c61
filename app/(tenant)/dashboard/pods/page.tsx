import Link from "next/link";
import { createPodAction } from "@/app/_actions/pods";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { CreatePodForm } from "@/components/forms/pod-forms";
import { PodsTable } from "@/components/pods/pod-views";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { listRates } from "@/lib/billing/rates";
import { formatCents } from "@/lib/billing/money";
import { fleetGpuTypes } from "@/lib/jobs/queries";
import { podActions } from "@/lib/pods/pod-lifecycle";
import { listPods } from "@/lib/pods/queries";
import { getTenantOrThrow, tenantFigures } from "@/lib/tenants/queries";
import { page } from "@/lib/pages/page";
import { PageSkeleton } from "@/components/shell/page-skeleton";
import { GpusInUseStat } from "@/components/workloads/gpus-in-use";
import { buttonClass } from "@/components/ui/button";

export const metadata = { title: "Pods" };

export default page({ plane: "tenant", path: "/dashboard/pods", loading: <PageSkeleton /> }, async ({ principal: p, searchParams: sp }) => {
  const [list, types, tenant, figures, rates] = await Promise.all([
    listPods(p, { limit: 200 }),
    fleetGpuTypes(),
    getTenantOrThrow(p, p.tenantId),
    tenantFigures(p.tenantId),
    listRates(),
  ]);
  const all = sp.all === "1";
  const pods = all ? list.data : list.data.filter((x) => x.status !== "terminated");
  const hidden = list.data.length - pods.length;
  const running = list.data.filter((x) => x.status === "running");
  return (
    <>
      <PageHeader
        title="Pods"
        description="Interactive GPU machines: a container with GPUs, SSH and the ports you publish, billed per second while it runs."
        actions={
          <div className="flex flex-wrap items-center gap-3">
            <a className={buttonClass("primary")} href="#create">
              Create a pod
            </a>
            <AutoRefresh seconds={5} />
          </div>
        }
      />
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
        <Stat
          label="Running"
          value={running.length}
          hint={`${list.data.filter((x) => x.status === "pending" || x.status === "starting").length} starting or waiting`}
        />
        <Stat
          label="Stopped"
          value={list.data.filter((x) => x.status === "stopped" || x.status === "failed").length}
          hint="Hold no GPUs, cost nothing"
        />
        <Stat label="Cost so far" value={formatCents(list.data.reduce((s, x) => s + x.cost_cents, 0))} hint="All your pods, every run" />
        <GpusInUseStat figures={figures} quota={tenant.gpuQuota} />
      </div>
      <Card className="mt-6">
        <CardHeader
          title="Your pods"
          description="Newest first. Stop one to release its GPUs and stop billing; start it again later (possibly on another node)."
          actions={
            hidden || all ? (
              <Link className="text-sm text-indigo-700 hover:underline" href={all ? "/dashboard/pods" : "/dashboard/pods?all=1"}>
                {all ? "Hide terminated" : `Show ${hidden} terminated`}
              </Link>
            ) : undefined
          }
        />
        {pods.length === 0 ? (
          <EmptyState title="No pods yet">
            Create one below: pick a GPU type and an image, publish 8888 for Jupyter, and paste your SSH public key to get an SSH command.
          </EmptyState>
        ) : (
          <PodsTable pods={pods} hrefBase="/dashboard/pods" actionsOf={(x) => podActions(x.status)} />
        )}
      </Card>
      <Card className="mt-6" id="create">
        <CardHeader
          title="Create a pod"
          description="It waits for free GPUs of its type on one node within your quota, then its node starts the container."
        />
        <CreatePodForm
          action={createPodAction}
          gpuTypes={types}
          rates={Object.fromEntries(rates.map((r) => [r.gpu_type, r.cents_per_hour]))}
        />
      </Card>
    </>
  );
});
