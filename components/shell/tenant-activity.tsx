import Link from "next/link";
import { InvoiceStatus, type InvoiceView } from "@/components/billing/invoice-document";
import { MonthSpendCard } from "@/components/billing/month-spend";
import { GpusInUseStat } from "@/components/workloads/gpus-in-use";
import { Card, CardHeader, EmptyState, Stat } from "@/components/ui/card";
import { formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { formatCents } from "@/lib/billing/money";

/** The operator's view of one tenant's use: GPUs against the quota, this month's money, what it owes, what runs now, its invoices. */
export function TenantActivity({
  tenantId,
  quota,
  view,
}: {
  tenantId: string;
  quota: number;
  view: {
    figures: { gpu_in_use: number; gpu_in_use_by: { jobs: number; endpoint_replicas: number; pods: number; reserved: number } };
    month: { billed_cents: number; accruing_cents: number; total_cents: number };
    outstanding: { cents: number; invoices: number };
    counts: { running: number; queued: number; blocked: number; endpoints: number; pods: number };
    running: Array<{ id: string; name: string; gpuCount: number; gpuType: string; startedAt: string | null; nodes: string[] }>;
    runningTotal: number;
    invoices: Array<Pick<InvoiceView, "id" | "number" | "status" | "period_start" | "period_end" | "amount_cents">>;
    moreInvoices: boolean;
  };
}) {
  const c = view.counts;
  return (
    <section aria-label="Usage and billing" className="mb-6 space-y-6">
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
        <GpusInUseStat figures={view.figures} quota={quota} quotaWords="its quota" />
        <MonthSpendCard spend={view.month} />
        <Stat
          label="Outstanding"
          value={formatCents(view.outstanding.cents)}
          hint={`${view.outstanding.invoices} pending invoice${view.outstanding.invoices === 1 ? "" : "s"}`}
        />
        <Stat
          label="Running work"
          value={`${c.running} job${c.running === 1 ? "" : "s"}`}
          hint={`${c.queued + c.blocked} waiting · ${c.endpoints} endpoint${c.endpoints === 1 ? "" : "s"} serving · ${c.pods} pod${c.pods === 1 ? "" : "s"}`}
        />
      </div>
      <div className="grid gap-6 lg:grid-cols-2">
        <Card>
          <CardHeader
            title="Running now"
            description={view.runningTotal > view.running.length ? `The newest ${view.running.length} of ${view.runningTotal}.` : undefined}
            actions={
              <Link className="text-sm font-medium text-indigo-700 hover:underline" href={`/admin/jobs?tenant_id=${tenantId}`}>
                Its jobs in the queue
              </Link>
            }
          />
          {view.running.length === 0 ? (
            <EmptyState title="No job runs now" />
          ) : (
            <Table caption="Its running jobs">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Job</Th>
                  <Th>GPUs</Th>
                  <Th>Where</Th>
                  <Th>Started</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {view.running.map((j) => (
                  <tr key={j.id}>
                    <Td>
                      <Link className="font-medium text-indigo-700 hover:underline" href={`/admin/jobs/${j.id}`}>
                        {j.name}
                      </Link>
                    </Td>
                    <Td className="tabular-nums">
                      {j.gpuCount} × {j.gpuType}
                    </Td>
                    <Td className="text-xs">{j.nodes.join(", ") || "—"}</Td>
                    <Td>{formatRelative(j.startedAt)}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </Card>
        <Card>
          <CardHeader
            title="Invoices"
            description={view.moreInvoices ? "The newest; every invoice is in Billing." : undefined}
            actions={
              <Link className="text-sm font-medium text-indigo-700 hover:underline" href="/admin/billing">
                Billing
              </Link>
            }
          />
          {view.invoices.length === 0 ? (
            <EmptyState title="No invoices yet">Generate one below, or wait for the 1st of the month.</EmptyState>
          ) : (
            <Table caption="Its invoices">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Number</Th>
                  <Th>Period</Th>
                  <Th className="text-right">Amount</Th>
                  <Th>Status</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {view.invoices.map((i) => (
                  <tr key={i.id}>
                    <Td>
                      <Link className="font-medium text-indigo-700 hover:underline" href={`/admin/billing/invoices/${i.id}`}>
                        {i.number}
                      </Link>
                    </Td>
                    <Td className="text-xs">
                      {i.period_start.slice(0, 10)} → {i.period_end.slice(0, 10)}
                    </Td>
                    <Td className="text-right tabular-nums">{formatCents(i.amount_cents)}</Td>
                    <Td>
                      <InvoiceStatus status={i.status} />
                    </Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </Card>
      </div>
    </section>
  );
}
