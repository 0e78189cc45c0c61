import { Card } from "@/components/ui/card";
import { formatCents } from "@/lib/billing/money";

// This month's money as every page shows it (lib/billing/month-spend.ts): the total, and its two
// parts apart, each named: billed (segments the meter wrote) and accruing (running work since its
// last segment, billed at the meter's next tick).

export const BILLED_LABEL = "Billed";
export const ACCRUING_LABEL = "Accruing (running work)";

export function MonthSpendCard({
  spend,
  label = "This month",
}: {
  spend: { billed_cents: number; accruing_cents: number; total_cents: number };
  label?: string;
}) {
  return (
    <Card className="px-5 py-4" data-testid="month-spend">
      <p className="text-xs font-medium uppercase tracking-wide text-slate-500">{label}</p>
      <p className="mt-1 text-2xl font-semibold tabular-nums text-slate-900" data-testid="month-total">
        {formatCents(spend.total_cents)}
      </p>
      <dl className="mt-1 grid grid-cols-2 gap-x-3 text-xs">
        <div>
          <dt className="text-slate-500">{BILLED_LABEL}</dt>
          <dd className="font-medium tabular-nums text-slate-800" data-testid="month-billed">
            {formatCents(spend.billed_cents)}
          </dd>
        </div>
        <div>
          <dt className="text-slate-500">{ACCRUING_LABEL}</dt>
          <dd className="font-medium tabular-nums text-slate-800" data-testid="month-accruing">
            {formatCents(spend.accruing_cents)}
          </dd>
        </div>
      </dl>
    </Card>
  );
}
