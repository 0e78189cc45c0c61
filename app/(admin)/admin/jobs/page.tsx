import { cancelJobAction } from "@/app/_actions/jobs";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { JobsTable } from "@/components/shell/jobs-table";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { requireOperatorPage } from "@/lib/auth/session";
import { operatorQueue } from "@/lib/jobs/queries";

export const metadata = { title: "Queue" };

export default async function AdminJobsPage() {
  await requireOperatorPage("/admin/jobs");
  const { waiting, running } = await operatorQueue();
  return (
    <>
      <PageHeader title="Queue" description="Every tenant's waiting work in scheduling order, and what runs where." actions={<AutoRefresh seconds={5} />} />
      <div className="grid gap-4 sm:grid-cols-3">
        <Stat label="Waiting" value={waiting.length} hint={`${waiting.filter((j) => j.status === "blocked").length} over quota`} />
        <Stat label="Running" value={running.length} />
        <Stat label="GPUs in use" value={running.reduce((s, j) => s + j.gpuCount, 0)} />
      </div>
      <Card className="mt-6">
        <CardHeader title="Waiting" description="Priority first, then fair share between tenants, then age." />
        <JobsTable
          showTenant
          cancelAction={cancelJobAction}
          jobs={waiting.map((j) => ({ id: j.id, name: j.name, tenant: j.tenant.name, status: j.status, gpuCount: j.gpuCount, gpuType: j.gpuType, priority: j.priority, pendingReason: j.pendingReason, submittedAt: j.submittedAt.toISOString() }))}
        />
      </Card>
      <Card className="mt-6">
        <CardHeader title="Running" />
        {running.length === 0 ? <EmptyState title="Nothing is running" /> : (
          <Table caption="Running jobs">
            <thead className="bg-slate-50"><tr><Th>Job</Th><Th>Tenant</Th><Th>GPUs</Th><Th>Nodes</Th><Th>Started</Th></tr></thead>
            <tbody className="divide-y divide-slate-100">
              {running.map((j) => (
                <tr key={j.id}>
                  <Td className="font-medium text-slate-900">{j.name}</Td>
                  <Td>{j.tenant.name}</Td>
                  <Td className="tabular-nums">{j.gpuCount} × {j.gpuType}</Td>
                  <Td className="text-xs">{[...new Set(j.gpus.map((g) => g.node.hostname))].join(", ")}</Td>
                  <Td>{formatRelative(j.startedAt)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </>
  );
}
