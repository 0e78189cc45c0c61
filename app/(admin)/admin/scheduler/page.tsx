import { runCycleAction } from "@/app/_actions/jobs";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { RunCycleButton } from "@/components/forms/job-forms";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { schedulerCycles } from "@/lib/jobs/scheduler-page";
import { CycleWork } from "@/components/shell/cycle-work";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Scheduler" };

export default page({ plane: "operator", path: "/admin/scheduler" }, async () => {
  const logs = await schedulerCycles(100);
  return (
    <>
      <PageHeader
        title="Scheduler"
        description="Cycles run on every submit, finished job and freed GPU, and at least every minute. Each is one transaction."
        actions={<AutoRefresh seconds={5} />}
      />
      <Card className="mb-6">
        <div className="p-5">
          <RunCycleButton action={runCycleAction} />
        </div>
      </Card>
      <Card>
        <CardHeader title="Recent cycles" />
        {logs.length === 0 ? (
          <EmptyState title="No cycle has run yet" />
        ) : (
          <Table caption="Scheduler cycles">
            <thead className="bg-slate-50">
              <tr>
                <Th>When</Th>
                <Th>Trigger</Th>
                <Th className="text-right">Considered</Th>
                <Th className="text-right">Placed</Th>
                <Th className="text-right">Blocked</Th>
                <Th className="text-right">Duration</Th>
                <Th>Work</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {logs.map((l) => (
                <tr key={l.id} className="align-top" data-testid={`cycle-${l.id}`}>
                  <Td>{formatDateTime(l.created_at)}</Td>
                  <Td className="text-xs">{l.trigger}</Td>
                  <Td className="text-right tabular-nums">{l.considered}</Td>
                  <Td className="text-right tabular-nums">{l.placed}</Td>
                  <Td className="text-right tabular-nums">{l.blocked}</Td>
                  <Td className="text-right tabular-nums">{l.duration_ms} ms</Td>
                  <Td wrap className="min-w-64">
                    <CycleWork decisions={l.decisions} considered={l.considered} />
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </>
  );
});
