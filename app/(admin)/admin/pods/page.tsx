import Link from "next/link";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { PodsTable } from "@/components/pods/pod-views";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatCents } from "@/lib/billing/money";
import { db } from "@/lib/db/client";
import { podActions, POD_STATUSES } from "@/lib/pods/pod-lifecycle";
import { listPods } from "@/lib/pods/queries";
import { page } from "@/lib/pages/page";
import { PageSkeleton } from "@/components/shell/page-skeleton";

export const metadata = { title: "Pods" };

export default page({ plane: "operator", path: "/admin/pods", loading: <PageSkeleton /> }, async ({ principal: p, searchParams: sp }) => {
  const status = POD_STATUSES.find((s) => s === sp.status);
  const [list, tenants] = await Promise.all([listPods(p, { limit: 500 }), db().tenant.findMany({ select: { id: true, name: true } })]);
  const pods = list.data.filter((x) => (status ? x.status === status : x.status !== "terminated"));
  const live = list.data.filter((x) => x.status === "running" || x.status === "starting");
  return (
    <>
      <PageHeader
        title="Pods"
        description="Every tenant's interactive pods (the newest 500): where they run, what they hold and cost, and why the waiting ones wait."
        actions={<AutoRefresh seconds={5} />}
      />
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
        <Stat label="Running or starting" value={live.length} />
        <Stat label="GPUs held by pods" value={live.reduce((s, x) => s + x.gpu_count, 0)} />
        <Stat label="Waiting" value={list.data.filter((x) => x.status === "pending").length} />
        <Stat
          label="Failed"
          value={list.data.filter((x) => x.status === "failed").length}
          hint="Interrupted by their node, or their container ended"
        />
      </div>
      <Card className="mt-6">
        <CardHeader
          title={status ? `Pods: ${status}` : "Pods (terminated hidden)"}
          description={`Operators may stop or terminate any pod; its tenant is told in its history. ${formatCents(pods.reduce((s, x) => s + x.cost_cents, 0))} billed or accruing across these.`}
          actions={
            <nav aria-label="Filter by status" className="flex flex-wrap gap-2 text-sm">
              {[undefined, ...POD_STATUSES].map((s) => (
                <Link
                  key={s ?? "all"}
                  href={s ? `/admin/pods?status=${s}` : "/admin/pods"}
                  aria-current={s === status ? "page" : undefined}
                  className={s === status ? "font-semibold text-slate-900" : "text-indigo-700 hover:underline"}
                >
                  {s ?? "live"}
                </Link>
              ))}
            </nav>
          }
        />
        {pods.length === 0 ? (
          <EmptyState title="No pods match">Pods tenants create appear here.</EmptyState>
        ) : (
          <PodsTable
            pods={pods}
            hrefBase="/admin/pods"
            tenantNames={new Map(tenants.map((t) => [t.id, t.name]))}
            actionsOf={(x) => ({ ...podActions(x.status), start: false })}
          />
        )}
      </Card>
    </>
  );
});
