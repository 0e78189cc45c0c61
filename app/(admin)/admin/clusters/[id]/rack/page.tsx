import Link from "next/link";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { RackNodes } from "@/components/fleet/rack-nodes";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { getClusterOrThrow } from "@/lib/fleet/cluster-queries";
import { summarizeRack } from "@/lib/fleet/floor-summary";
import { fleetFloor } from "@/lib/fleet/queries";
import { nullIfRefused } from "@/lib/errors";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Rack" };

// One rack of the fleet floor, drilled into from the overview: every node and GPU with its own
// label and link. `pod` and `rack` absent: the cluster's nodes registered without one.
export default page(
  {
    plane: "operator",
    path: "/admin/clusters/[id]/rack",
    ids: ["id"],
    load: async ({ principal, ids: { id }, searchParams: q }) => {
      const cluster = await nullIfRefused(getClusterOrThrow(principal, id));
      if (!cluster) return null;
      const [rack] = await fleetFloor(id, { pod: q.pod ?? null, rack: q.rack ?? null });
      return { cluster, rack, summary: rack ? summarizeRack(rack) : null };
    },
  },
  ({ ids: { id }, searchParams: q, data: { cluster, rack, summary: s } }) => {
    const pod = q.pod ?? null;
    const rackName = q.rack ?? null;
    const title = `Rack ${rackName ?? "unassigned"}`;
    return (
      <>
        <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500">
          <Link href="/admin" className="hover:underline">
            Fleet overview
          </Link>{" "}
          /{" "}
          <Link href={`/admin/clusters/${id}`} className="hover:underline">
            {cluster.name}
          </Link>{" "}
          / <span>pod {pod ?? "unassigned"}</span> / <span aria-current="page">{rackName ?? "unassigned"}</span>
        </nav>
        <PageHeader title={title} description={`Pod ${pod ?? "unassigned"} · ${cluster.name}`} actions={<AutoRefresh seconds={10} />} />
        {rack && s ? (
          <>
            <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
              <Stat
                label="Nodes"
                value={s.nodes}
                hint={
                  Object.entries(s.outOfService)
                    .map(([k, n]) => `${n} ${k}`)
                    .join(" · ") || "all available"
                }
              />
              <Stat label="GPUs" value={s.gpus} hint={`${s.allocatedGpus} allocated · ${s.busyGpus} busy (≥ 50 %)`} />
              <Stat
                label="Unhealthy GPUs"
                value={<span className={s.unhealthyGpus ? "text-red-700" : undefined}>{s.unhealthyGpus}</span>}
              />
              <Stat label="Reserved nodes" value={s.reservedNodes} />
            </div>
            <Card className="mt-6">
              <CardHeader
                title={`Nodes (${s.nodes})`}
                description="A cell per GPU, coloured by its last-minute utilization; red: unhealthy. Select a node for its GPUs, work and history."
              />
              <RackNodes nodes={rack.nodes} />
            </Card>
          </>
        ) : (
          <Card>
            <EmptyState title="No nodes in this rack">Nodes appear here once their agent registers with this pod and rack.</EmptyState>
          </Card>
        )}
      </>
    );
  },
);
