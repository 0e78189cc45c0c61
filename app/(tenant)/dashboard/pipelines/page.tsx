import Link from "next/link";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { JobStatus } from "@/components/shell/jobs-table";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { requireTenantPage } from "@/lib/auth/session";
import { listPipelines } from "@/lib/pipelines/queries";

export const metadata = { title: "Pipelines" };

export default async function PipelinesPage() {
  const p = await requireTenantPage("/dashboard/pipelines");
  const pipelines = await listPipelines(p);
  return (
    <>
      <PageHeader title="Pipelines" description="Multi-step workflows: each step runs as a job once everything it depends on completed. Submit them with POST /api/pipelines." actions={<AutoRefresh seconds={5} />} />
      <Card>
        <CardHeader title={`Pipelines (${pipelines.length})`} />
        {pipelines.length === 0 ? (
          <EmptyState title="No pipelines yet">Send a DAG of steps to <code>POST /api/pipelines</code>; the API reference shows an example.</EmptyState>
        ) : (
          <Table caption="Pipelines">
            <thead className="bg-slate-50"><tr><Th>Name</Th><Th>Status</Th><Th>Steps</Th><Th>Submitted</Th></tr></thead>
            <tbody className="divide-y divide-slate-100">
              {pipelines.map((pl) => (
                <tr key={pl.id}>
                  <Td><Link className="font-medium text-indigo-700 hover:underline" href={`/dashboard/pipelines/${pl.id}`}>{pl.name}</Link></Td>
                  <Td><JobStatus status={pl.status} /></Td>
                  <Td>{pl.steps.filter((s) => s.status === "completed").length} of {pl.steps.length} completed</Td>
                  <Td>{formatRelative(pl.createdAt)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </>
  );
}
