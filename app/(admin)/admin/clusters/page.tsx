import { createClusterAction } from "@/app/_actions/clusters";
import { CreateClusterForm } from "@/components/forms/cluster-form";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { requireOperatorPage } from "@/lib/auth/session";
import { listClusters } from "@/lib/fleet/cluster-queries";

export const metadata = { title: "Clusters" };

export default async function ClustersPage() {
  const p = await requireOperatorPage("/admin/clusters");
  const clusters = await listClusters(p, { limit: 500 });
  return (
    <>
      <PageHeader title="Clusters" description="Groups of GPU nodes managed together. Node agents register into a cluster with that cluster's agent key." />
      <Card className="mb-6">
        <CardHeader title="Register a cluster" />
        <CreateClusterForm action={createClusterAction} />
      </Card>
      <Card>
        <CardHeader title={`Clusters (${clusters.data.length})`} />
        {clusters.data.length === 0 ? (
          <EmptyState title="No clusters yet">Register one above, then create an agent key for it under API keys.</EmptyState>
        ) : (
          <Table caption="Clusters">
            <thead className="bg-slate-50"><tr><Th>Name</Th><Th>Region</Th><Th>Provider</Th><Th>Registered</Th></tr></thead>
            <tbody className="divide-y divide-slate-100">
              {clusters.data.map((c) => (
                <tr key={c.id}>
                  <Td className="font-medium text-slate-900">{c.name}</Td>
                  <Td>{c.region ?? "—"}</Td>
                  <Td>{c.provider ?? "—"}</Td>
                  <Td>{formatDateTime(c.createdAt)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </>
  );
}
