import Link from "next/link";
import { createClusterAction } from "@/app/_actions/clusters";
import { CreateClusterForm } from "@/components/forms/cluster-form";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { Table, Td, Th } from "@/components/ui/table";
import { clusterOverview } from "@/lib/fleet/queries";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Clusters" };

export default page({ plane: "operator", path: "/admin/clusters" }, async () => {
  const clusters = await clusterOverview();
  return (
    <>
      <PageHeader
        title="Clusters"
        description="Groups of GPU nodes managed together. Node agents register into a cluster with that cluster's agent key; a Slurm cluster joins as it is, through its Slurm bridge."
      />
      <Card className="mb-6">
        <CardHeader title="Register a cluster" />
        <CreateClusterForm action={createClusterAction} />
      </Card>
      <Card>
        <CardHeader title={`Clusters (${clusters.length})`} />
        {clusters.length === 0 ? (
          <EmptyState title="No clusters yet">Register one above, then create an agent key for it under API keys.</EmptyState>
        ) : (
          <Table caption="Clusters">
            <thead className="bg-slate-50">
              <tr>
                <Th>Name</Th>
                <Th>Region</Th>
                <Th>Provider</Th>
                <Th>Run by</Th>
                <Th className="text-right">Nodes</Th>
                <Th className="text-right">Offline</Th>
                <Th className="text-right">GPUs</Th>
                <Th className="text-right">Unhealthy</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {clusters.map((c) => (
                <tr key={c.id} className="hover:bg-slate-50">
                  <Td>
                    <Link className="font-medium text-indigo-700 hover:underline" href={`/admin/clusters/${c.id}`}>
                      {c.name}
                    </Link>
                  </Td>
                  <Td>{c.region ?? "—"}</Td>
                  <Td>{c.provider ?? "—"}</Td>
                  <Td>{c.kind === "slurm" ? "Slurm bridge" : "Node agents"}</Td>
                  <Td className="text-right tabular-nums">{c.nodes}</Td>
                  <Td className="text-right tabular-nums">{c.offline}</Td>
                  <Td className="text-right tabular-nums">{c.gpus}</Td>
                  <Td className="text-right tabular-nums">{c.unhealthy}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </>
  );
});
