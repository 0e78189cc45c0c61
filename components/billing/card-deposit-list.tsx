import { Badge } from "@/components/ui/badge";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { formatCents } from "@/lib/billing/money";

interface Deposit {
  id: string;
  reference: string;
  amount_cents: number;
  currency: string;
  status: "open" | "processing" | "paid" | "expired" | "failed";
  refunded_cents: number;
  failed_attempts: number;
  failure_message: string | null;
  created_at: string;
  paid_at: string | null;
}

const STATUS: Record<Deposit["status"], { label: string; tone: "green" | "amber" | "red" | "neutral" | "sky" }> = {
  open: { label: "Awaiting payment", tone: "sky" },
  processing: { label: "Payment processing", tone: "amber" },
  paid: { label: "Paid", tone: "green" },
  expired: { label: "Expired unpaid", tone: "neutral" },
  failed: { label: "Payment failed", tone: "red" },
};

/** Card payments a tenant started: each one's state, including declines, expiries and refunds. */
export function CardDepositList({ deposits, highlight }: { deposits: Deposit[]; highlight?: string }) {
  return (
    <Table caption="Card payments">
      <thead className="bg-slate-50">
        <tr>
          <Th>Started</Th>
          <Th>Reference</Th>
          <Th className="text-right">Amount</Th>
          <Th>Status</Th>
          <Th>Details</Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {deposits.map((d) => (
          <tr key={d.id} className={d.id === highlight ? "bg-indigo-50/50" : undefined} data-testid={`card-deposit-${d.id}`}>
            <Td>{formatDateTime(d.created_at)}</Td>
            <Td className="font-mono text-xs">{d.reference}</Td>
            <Td className="text-right tabular-nums">{formatCents(d.amount_cents, d.currency.toUpperCase())}</Td>
            <Td>
              <Badge tone={STATUS[d.status].tone}>{STATUS[d.status].label}</Badge>
            </Td>
            <Td className="text-xs text-slate-600">
              {d.refunded_cents > 0 ? `${formatCents(d.refunded_cents, d.currency.toUpperCase())} refunded to the card. ` : ""}
              {d.paid_at ? `Credited ${formatDateTime(d.paid_at)}. ` : ""}
              {d.failure_message && d.status !== "paid"
                ? `${d.failure_message}${d.failed_attempts > 1 ? ` (${d.failed_attempts} declined attempts)` : ""}`
                : ""}
            </Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}
