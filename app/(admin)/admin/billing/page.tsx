import Link from "next/link";
import { setRateAction } from "@/app/_actions/billing";
import { InvoiceStatus } from "@/components/billing/invoice-document";
import { ACCRUING_LABEL, BILLED_LABEL, MonthSpendCard } from "@/components/billing/month-spend";
import { RevenueByMonthChart } from "@/components/fleet/charts";
import { SetRateForm } from "@/components/forms/billing-forms";
import { Badge } from "@/components/ui/badge";
import { FilterTabs, OlderLink } from "@/components/ui/list-nav";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { invoiceJson } from "@/lib/billing/invoice-json";
import { listInvoices } from "@/lib/billing/list-invoices";
import { formatCents } from "@/lib/billing/money";
import { listRates } from "@/lib/billing/rates";
import { listInvoicesQuery } from "@/lib/billing/schemas";
import { stripeConfigFromEnv } from "@/lib/billing/stripe";
import { billingSummary, tenantBillingTable, usageByMonth } from "@/lib/billing/usage";
import { page } from "@/lib/pages/page";
import { effectiveSettings } from "@/lib/settings/settings";
import { PageSkeleton } from "@/components/shell/page-skeleton";
import { ProviderSpendCard } from "@/components/providers/provider-spend";
import { providerSpend } from "@/lib/providers/provider-spend";

export const metadata = { title: "Billing" };

export default page(
  { plane: "operator", path: "/admin/billing", loading: <PageSkeleton /> },
  async ({ principal: p, searchParams: sp }) => {
    const parsed = listInvoicesQuery.safeParse({ status: sp.status || undefined, cursor: sp.cursor || undefined, limit: 25 });
    const q = parsed.success ? parsed.data : { limit: 25 };
    const [summary, months, tenants, rates, invoices, spend] = await Promise.all([
      billingSummary(),
      usageByMonth(12),
      tenantBillingTable(),
      listRates(),
      listInvoices(p, q).catch(() => listInvoices(p, { limit: 25 })),
      providerSpend(p),
    ]);
    const names = new Map(tenants.map((t) => [t.id, t.name]));
    const stripe = Boolean(stripeConfigFromEnv().secretKey);
    const bank = (await effectiveSettings()).bank;
    return (
      <>
        <PageHeader
          title="Billing"
          description="Per-second GPU usage priced at your rates, invoiced monthly or charged to prepaid balances."
        />
        <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
          <MonthSpendCard
            spend={{
              billed_cents: summary.revenue_month_billed_cents,
              accruing_cents: summary.revenue_month_accruing_cents,
              total_cents: summary.revenue_month_cents,
            }}
          />
          <Stat
            label="Outstanding"
            value={formatCents(summary.outstanding_cents)}
            hint={`${summary.invoices_pending} pending invoice${summary.invoices_pending === 1 ? "" : "s"}`}
          />
          <Stat
            label="Paid"
            value={formatCents(summary.revenue_cents)}
            hint={`${summary.invoices_paid} paid invoice${summary.invoices_paid === 1 ? "" : "s"}`}
          />
          <Stat
            label="Payments"
            value={stripe ? "Stripe" : "Local"}
            hint={
              stripe
                ? "Invoices carry a card payment link (Stripe)"
                : bank
                  ? `Card payments are off: tenants pay from their balance or by bank transfer to ${bank.account_name}`
                  : "No way to pay yet: set bank details (Settings → Payments) or configure Stripe; tenants can only pay from a balance"
            }
          />
        </div>
        <Card className="mt-6">
          <CardHeader title="Billed usage by month" description="By GPU type, last 12 months (UTC)." />
          <div className="p-5">
            {months.length === 0 ? (
              <EmptyState title="No usage billed yet">Runs are billed as they end, and every hour while they run.</EmptyState>
            ) : (
              <RevenueByMonthChart rows={months} />
            )}
          </div>
        </Card>
        <ProviderSpendCard rows={spend} />
        <Card className="mt-6">
          <CardHeader title="Tenants" description="Open a tenant to invoice it, record a deposit or change how it is billed." />
          {tenants.length === 0 ? (
            <EmptyState title="No tenants yet" />
          ) : (
            <Table caption="Billing by tenant">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Tenant</Th>
                  <Th>Billing</Th>
                  <Th className="text-right">{BILLED_LABEL} this month</Th>
                  <Th className="text-right">{ACCRUING_LABEL}</Th>
                  <Th className="text-right">Outstanding</Th>
                  <Th className="text-right">Balance</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {tenants.map((t) => (
                  <tr key={t.id}>
                    <Td>
                      <Link href={`/admin/tenants/${t.id}`} className="font-medium text-indigo-700 hover:underline">
                        {t.name}
                      </Link>
                    </Td>
                    <Td>
                      <Badge tone={t.billingMode === "prepaid" ? "sky" : "neutral"}>{t.billingMode}</Badge>
                    </Td>
                    <Td className="text-right tabular-nums">{formatCents(t.billedCents)}</Td>
                    <Td className="text-right tabular-nums">{formatCents(t.accruingCents)}</Td>
                    <Td className="text-right tabular-nums">{formatCents(t.outstandingCents)}</Td>
                    <Td
                      className={`text-right tabular-nums ${t.billingMode === "prepaid" && t.balanceCents <= 0 ? "font-medium text-red-700" : ""}`}
                    >
                      {formatCents(t.balanceCents)}
                    </Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </Card>
        <Card className="mt-6">
          <CardHeader
            title="Invoices"
            actions={
              <FilterTabs
                label="Filter invoices"
                base="/admin/billing"
                current={q.status}
                options={[
                  ["", "All"],
                  ["pending", "Pending"],
                  ["paid", "Paid"],
                  ["void", "Void"],
                ]}
              />
            }
          />
          {invoices.data.length === 0 ? (
            <EmptyState title="No invoices">
              Generate one from a tenant's page; the 1st of each month invoices everyone automatically.
            </EmptyState>
          ) : (
            <Table caption="Invoices">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Number</Th>
                  <Th>Tenant</Th>
                  <Th>Period</Th>
                  <Th className="text-right">Amount</Th>
                  <Th>Status</Th>
                  <Th>Issued</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {invoices.data.map(invoiceJson).map((i) => (
                  <tr key={i.id}>
                    <Td>
                      <Link href={`/admin/billing/invoices/${i.id}`} className="font-medium text-indigo-700 hover:underline">
                        {i.number}
                      </Link>
                    </Td>
                    <Td>{names.get(i.tenant_id) ?? "—"}</Td>
                    <Td className="text-xs">
                      {i.period_start.slice(0, 10)} → {i.period_end.slice(0, 10)}
                    </Td>
                    <Td className="text-right tabular-nums">{formatCents(i.amount_cents)}</Td>
                    <Td>
                      <InvoiceStatus status={i.status} />
                    </Td>
                    <Td>{formatDateTime(i.created_at)}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
          <OlderLink
            href={invoices.nextCursor ? `/admin/billing?cursor=${invoices.nextCursor}${q.status ? `&status=${q.status}` : ""}` : null}
          />
        </Card>
        <Card className="mt-6">
          <CardHeader title="GPU rates" description="Per GPU-hour, billed per second. Changes apply from now on; history is kept." />
          <Table caption="GPU rates">
            <thead className="bg-slate-50">
              <tr>
                <Th>GPU type</Th>
                <Th className="text-right">Per GPU-hour</Th>
                <Th>Since</Th>
                <Th>Previous</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {rates.map((r) => (
                <tr key={r.gpu_type}>
                  <Td className="font-medium text-slate-900">{r.gpu_type === "*" ? "Any other type" : r.gpu_type}</Td>
                  <Td className="text-right tabular-nums">{formatCents(r.cents_per_hour)}</Td>
                  <Td>
                    {formatDateTime(r.effective_from)} · {r.created_by}
                  </Td>
                  <Td className="text-xs text-slate-500">
                    {r.history
                      .slice(1, 4)
                      .map((h) => `${formatCents(h.cents_per_hour)} from ${h.effective_from.slice(0, 10)}`)
                      .join(" · ") || "—"}
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
          <div className="border-t border-slate-100">
            <SetRateForm action={setRateAction} />
          </div>
        </Card>
      </>
    );
  },
);
