import { Badge } from "@/components/ui/badge";
import { formatDateTime } from "@/components/ui/format";
import { formatCents, gpuHours } from "@/lib/billing/money";

export interface InvoiceView {
  id: string;
  number: string;
  status: "pending" | "paid" | "void";
  period_start: string;
  period_end: string;
  amount_cents: number;
  payment_method: string | null;
  paid_at: string | null;
  created_at: string;
  lines: Array<{
    gpu_type: string;
    gpu_seconds: number;
    amount_cents: number;
    jobs: Array<{
      job_id: string | null;
      endpoint_id: string | null;
      covered_by_reservation_id: string | null;
      description: string;
      gpu_seconds: number;
      amount_cents: number;
    }>;
  }>;
}

const statusTone = { pending: "amber", paid: "green", void: "neutral" } as const;

export function InvoiceStatus({ status }: { status: InvoiceView["status"] }) {
  return <Badge tone={statusTone[status]}>{status}</Badge>;
}

/** The invoice as a document: printable (the page's chrome is hidden in print). */
export function InvoiceDocument({
  invoice,
  tenantName,
  billingEmail,
}: {
  invoice: InvoiceView;
  tenantName: string;
  billingEmail: string | null;
}) {
  const day = (iso: string) => new Date(iso).toISOString().slice(0, 10);
  return (
    <article
      className="rounded-lg bg-white p-8 shadow-sm ring-1 ring-slate-200 print:p-0 print:shadow-none print:ring-0"
      aria-label={`Invoice ${invoice.number}`}
    >
      <header className="flex flex-wrap items-start justify-between gap-6 border-b border-slate-200 pb-6">
        <div>
          <p className="text-lg font-semibold text-slate-900">GPUForge</p>
          <p className="text-sm text-slate-500">GPU compute, billed per second</p>
        </div>
        <div className="text-right">
          <h2 className="text-2xl font-semibold tracking-tight text-slate-900">{invoice.number}</h2>
          <p className="mt-1 text-sm text-slate-600">Issued {formatDateTime(invoice.created_at)}</p>
          <div className="mt-2">
            <InvoiceStatus status={invoice.status} />
          </div>
        </div>
      </header>
      <dl className="grid gap-4 py-6 text-sm sm:grid-cols-3">
        <div>
          <dt className="text-xs uppercase tracking-wide text-slate-500">Billed to</dt>
          <dd className="mt-1 font-medium text-slate-900">{tenantName}</dd>
          <dd className="text-slate-600">{billingEmail ?? "—"}</dd>
        </div>
        <div>
          <dt className="text-xs uppercase tracking-wide text-slate-500">Period (UTC)</dt>
          <dd className="mt-1 text-slate-900">
            {day(invoice.period_start)} → {day(invoice.period_end)}
          </dd>
        </div>
        <div>
          <dt className="text-xs uppercase tracking-wide text-slate-500">Payment</dt>
          <dd className="mt-1 text-slate-900">
            {invoice.status === "paid"
              ? `Paid ${formatDateTime(invoice.paid_at)} (${invoice.payment_method})`
              : invoice.status === "void"
                ? "Void"
                : "Due on receipt"}
          </dd>
        </div>
      </dl>
      <table className="min-w-full text-sm">
        <caption className="sr-only">Invoice lines</caption>
        <thead className="border-y border-slate-200 text-left text-xs uppercase tracking-wide text-slate-500">
          <tr>
            <th scope="col" className="py-2">
              Description
            </th>
            <th scope="col" className="py-2 text-right">
              GPU-hours
            </th>
            <th scope="col" className="py-2 text-right">
              Amount
            </th>
          </tr>
        </thead>
        {invoice.lines.map((l) => (
          <tbody key={l.gpu_type} className="border-b border-slate-100">
            <tr className="font-medium text-slate-900">
              <td className="pt-4">{l.gpu_type}</td>
              <td className="pt-4 text-right tabular-nums">{gpuHours(l.gpu_seconds).toLocaleString("en-US")}</td>
              <td className="pt-4 text-right tabular-nums">{formatCents(l.amount_cents)}</td>
            </tr>
            {l.jobs.map((j, i) => (
              <tr key={i} className="text-slate-600">
                <td className="py-1 pl-4">{j.description}</td>
                <td className="py-1 text-right tabular-nums">{gpuHours(j.gpu_seconds).toLocaleString("en-US")}</td>
                <td className="py-1 text-right tabular-nums" data-testid={j.covered_by_reservation_id ? "covered-line" : undefined}>
                  {j.covered_by_reservation_id ? (
                    <span className="text-xs text-sky-800">covered by reservation</span>
                  ) : (
                    formatCents(j.amount_cents)
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        ))}
        <tfoot>
          <tr className="text-base font-semibold text-slate-900">
            <td className="pt-4">Total</td>
            <td />
            <td className="pt-4 text-right tabular-nums">{formatCents(invoice.amount_cents)}</td>
          </tr>
        </tfoot>
      </table>
      <p className="mt-6 text-xs text-slate-500">
        Usage is measured per second per GPU and priced at the rate in force when each segment started; each segment is rounded to the cent
        once.
      </p>
    </article>
  );
}
