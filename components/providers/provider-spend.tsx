import Link from "next/link";
import { Card, CardHeader } from "@/components/ui/card";
import { Table, Td, Th } from "@/components/ui/table";
import { formatCents } from "@/lib/billing/money";
import type { ProviderSpendRow } from "@/lib/providers/provider-spend";
import { PROVIDER_LABELS } from "@/lib/providers/vocabulary";

/** The billing page's provider spend: what rented capacity cost and earned this month. Nothing when no provider is configured or used. */
export function ProviderSpendCard({ rows }: { rows: ProviderSpendRow[] }) {
  const shown = rows.filter((r) => r.enabled || r.monthCostCents > 0 || r.monthRevenueCents > 0);
  if (shown.length === 0) return null;
  return (
    <Card className="mt-6">
      <CardHeader
        title="Provider spend"
        description="Capacity rented from GPU providers for burst: their cost (boot and idle time included) against usage billed on it at our price, this month (UTC)."
        actions={
          <Link className="text-sm text-indigo-700 hover:underline" href="/admin/providers">
            Providers and offers
          </Link>
        }
      />
      <Table caption="Provider spend this month">
        <thead className="bg-slate-50">
          <tr>
            <Th>Provider</Th>
            <Th className="text-right">Spend today</Th>
            <Th className="text-right">Spend this month</Th>
            <Th className="text-right">Billed on it</Th>
            <Th className="text-right">Margin</Th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {shown.map((r) => (
            <tr key={r.provider}>
              <Td>{PROVIDER_LABELS[r.provider]}</Td>
              <Td className="text-right tabular-nums">{formatCents(r.todayCents)}</Td>
              <Td className="text-right tabular-nums">{formatCents(r.monthCostCents)}</Td>
              <Td className="text-right tabular-nums">{formatCents(r.monthRevenueCents)}</Td>
              <Td className={`text-right font-medium tabular-nums ${r.monthMarginCents < 0 ? "text-red-700" : "text-emerald-700"}`}>
                {formatCents(r.monthMarginCents)}
              </Td>
            </tr>
          ))}
        </tbody>
      </Table>
    </Card>
  );
}
