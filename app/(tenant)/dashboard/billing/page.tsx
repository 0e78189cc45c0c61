import Link from "next/link";
import { cardDepositAction } from "@/app/_actions/billing";
import { updateBurstAction } from "@/app/_actions/providers";
import { BurstForm } from "@/components/providers/burst-form";
import { InvoiceStatus } from "@/components/billing/invoice-document";
import { AddFundsByCard } from "@/components/billing/add-funds";
import { CardDepositList } from "@/components/billing/card-deposit-list";
import { cardDepositLimits, cardDepositsAvailable, listCardDeposits } from "@/lib/billing/card-deposits";
import { UsageByTypeChart } from "@/components/fleet/charts";
import { buttonClass } from "@/components/ui/button";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { invoiceJson } from "@/lib/billing/invoice-json";
import { listInvoices } from "@/lib/billing/list-invoices";
import { balanceOf, listTransactions } from "@/lib/billing/ledger";
import { depositReference, formatCents, formatDuration, gpuHours } from "@/lib/billing/money";
import { listRates } from "@/lib/billing/rates";
import { tenantMonthSpend } from "@/lib/billing/month-spend";
import { balanceOutlook, tenantUsage } from "@/lib/billing/usage";
import { MonthSpendCard } from "@/components/billing/month-spend";
import { effectiveSettings } from "@/lib/settings/settings";
import { BankTransfer } from "@/components/billing/payment-guides";
import { getTenantOrThrow } from "@/lib/tenants/queries";
import { page } from "@/lib/pages/page";
import { env } from "@/lib/env";
import { PageSkeleton } from "@/components/shell/page-skeleton";

export const metadata = { title: "Billing" };

const kindLabels: Record<string, string> = {
  deposit: "Deposit",
  charge: "Usage",
  invoice_payment: "Invoice payment",
  refund: "Refund",
  card_refund: "Card refund",
  reservation: "Reservation (paid up front)",
  reservation_return: "Reservation credit (paid up front)",
};

export default page({ plane: "tenant", path: "/dashboard/billing", loading: <PageSkeleton /> }, async ({ principal: p, searchParams }) => {
  const [tenant, usage, month, invoices, balance, ledger, rates] = await Promise.all([
    getTenantOrThrow(p, p.tenantId),
    tenantUsage(p, p.tenantId, {}),
    tenantMonthSpend(p.tenantId),
    listInvoices(p, { tenantId: p.tenantId, limit: 50 }),
    balanceOf(p.tenantId),
    listTransactions(p, p.tenantId, { limit: 20 }),
    listRates(),
  ]);
  const [settings, outlook, deposits] = await Promise.all([
    effectiveSettings(),
    balanceOutlook(p.tenantId),
    listCardDeposits(p, p.tenantId, { limit: 10 }),
  ]);
  const cards = cardDepositsAvailable();
  const stripe = cards.available;
  const limits = cardDepositLimits();
  const returned = deposits.data.find((d) => d.id === searchParams.deposit);
  const isAdmin = p.role === "tenant_admin";
  const prepaid = tenant.billingMode === "prepaid";
  const due = invoices.data.filter((i) => i.status === "pending");
  return (
    <>
      <PageHeader
        title="Billing"
        description={
          prepaid
            ? "Your work is charged to your prepaid balance as it runs, per second."
            : "Your usage is measured per second and invoiced monthly."
        }
      />
      {returned ? (
        <p
          role="status"
          className="mb-6 rounded-lg bg-indigo-50 px-4 py-3 text-sm text-indigo-900 ring-1 ring-indigo-200"
          data-testid="deposit-return"
        >
          {returned.status === "paid"
            ? `Payment ${returned.reference} received: ${formatCents(returned.amount_cents)} was added to your balance. A receipt is on its way by email.`
            : searchParams.cancelled
              ? `Payment ${returned.reference} was cancelled; nothing was charged.`
              : `Payment ${returned.reference} is with Stripe; your balance updates as soon as Stripe confirms it (usually within seconds). Reload to see it.`}
        </p>
      ) : null}
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
        <MonthSpendCard spend={month} />
        <Stat
          label="Spending now"
          value={`${formatCents(month.accruing_cents_per_hour)}/h`}
          hint={`What runs now, at today's rates · ${gpuHours(usage.gpu_seconds).toLocaleString("en-US")} GPU-hours billed this month`}
        />
        <Stat
          label={prepaid ? "Prepaid balance" : "Credit balance"}
          value={<span className={prepaid && outlook.level !== "ok" ? "text-red-700" : undefined}>{formatCents(balance)}</span>}
          hint={
            prepaid
              ? outlook.level === "empty"
                ? "Used up: new work waits until funds arrive"
                : outlook.zero_at
                  ? `Lasts about ${formatDuration(Date.parse(outlook.zero_at) - Date.now())} at ${formatCents(outlook.spend_cents_per_hour)}/h`
                  : "Nothing runs now"
              : "Can pay invoices"
          }
        />
        <Stat
          label="Due"
          value={formatCents(due.reduce((s, i) => s + Number(i.amountCents), 0))}
          hint={`${due.length} pending invoice${due.length === 1 ? "" : "s"}`}
        />
      </div>
      <div className="mt-6 grid gap-6 lg:grid-cols-2">
        <Card>
          <CardHeader title="Billed this month by GPU type" description="Running work shows here once the meter bills it." />
          <div className="p-5">
            {usage.by_gpu_type.length === 0 ? (
              <EmptyState title="No usage billed this month" />
            ) : (
              <UsageByTypeChart rows={usage.by_gpu_type} />
            )}
          </div>
        </Card>
        <Card>
          <CardHeader title="Rates" description="Per GPU-hour, billed per second." />
          <Table caption="GPU rates">
            <thead className="bg-slate-50">
              <tr>
                <Th>GPU type</Th>
                <Th className="text-right">Per GPU-hour</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {rates.map((r) => (
                <tr key={r.gpu_type}>
                  <Td>{r.gpu_type === "*" ? "Any other type" : r.gpu_type}</Td>
                  <Td className="text-right tabular-nums">{formatCents(r.cents_per_hour)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        </Card>
      </div>
      <Card className="mt-6" id="burst">
        <CardHeader
          title="Burst to GPU providers"
          description="When this fleet is full, a job that has waited long enough can run on capacity rented from a GPU provider, billed here at the price shown on the job."
        />
        <BurstForm
          action={updateBurstAction}
          tenantId={tenant.id}
          enabled={tenant.burstEnabled}
          maxPriceCents={tenant.burstMaxPriceCentsPerGpuHour}
          canEdit={p.role === "tenant_admin" && tenant.burstAllowed}
          allowed={tenant.burstAllowed}
        />
      </Card>
      <Card className="mt-6">
        <CardHeader title="Invoices" />
        {invoices.data.length === 0 ? (
          <EmptyState title="No invoices yet">
            {prepaid
              ? "Your usage is charged to your balance as it runs; invoices appear here only when your operator issues one."
              : "Invoices are issued on the 1st of each month for the month before."}
          </EmptyState>
        ) : (
          <Table caption="Invoices">
            <thead className="bg-slate-50">
              <tr>
                <Th>Number</Th>
                <Th>Period</Th>
                <Th className="text-right">Amount</Th>
                <Th>Status</Th>
                <Th pin="right">
                  <span className="sr-only">Actions</span>
                </Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {invoices.data.map(invoiceJson).map((i) => (
                <tr key={i.id}>
                  <Td>
                    <Link href={`/dashboard/billing/invoices/${i.id}`} className="font-medium text-indigo-700 hover:underline">
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
                  <Td className="text-right" pin="right">
                    {i.status === "pending" ? (
                      <Link className={buttonClass("primary", "sm")} href={`/dashboard/billing/invoices/${i.id}`}>
                        Pay
                      </Link>
                    ) : i.paid_at ? (
                      <span className="text-xs text-slate-500">paid {formatDateTime(i.paid_at)}</span>
                    ) : null}
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
      {prepaid || stripe ? (
        <Card className="mt-6" id="add-funds">
          <CardHeader
            title={prepaid ? "Add funds" : "Add credit"}
            description={
              prepaid
                ? "Work is charged to this balance per second as it runs. At zero, new work waits until funds arrive and running work stops after the grace period; a deposit queues it again."
                : "Pay by card through Stripe; the credit pays your next invoices."
            }
          />
          {!stripe ? (
            <p className="px-5 pt-5 text-sm text-slate-600" data-testid="card-unavailable">
              Paying by card is not available: {cards.available ? "" : cards.why.charAt(0).toLowerCase() + cards.why.slice(1)}
            </p>
          ) : isAdmin ? (
            <AddFundsByCard action={cardDepositAction} minCents={limits.minCents} maxCents={limits.maxCents} currency={limits.currency} />
          ) : (
            <p className="px-5 pt-5 text-sm text-slate-600">Your organisation&apos;s admins add funds by card.</p>
          )}
          {deposits.data.length ? (
            <div className="border-t border-slate-100">
              <CardDepositList deposits={deposits.data} highlight={returned?.id} />
            </div>
          ) : null}
          {prepaid ? (
            <div className={stripe ? "border-t border-slate-100 p-5" : "p-5"}>
              <h3 className="mb-3 text-sm font-semibold text-slate-900">{stripe ? "Or by bank transfer" : "By bank transfer"}</h3>
              <BankTransfer bank={settings.bank} reference={depositReference(p.tenantId)} demo={env().DEMO_MODE} />
            </div>
          ) : null}
        </Card>
      ) : null}
      <Card className="mt-6">
        <CardHeader title="Balance history" description="Every deposit, usage charge and payment; the balance is their sum." />
        {ledger.data.length === 0 ? (
          <EmptyState title="No transactions yet">Your operator records deposits; usage charges appear here in prepaid mode.</EmptyState>
        ) : (
          <Table caption="Ledger">
            <thead className="bg-slate-50">
              <tr>
                <Th>When</Th>
                <Th>Entry</Th>
                <Th>Details</Th>
                <Th className="text-right">Amount</Th>
                <Th className="text-right">Balance</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {ledger.data.map((e) => (
                <tr key={e.id}>
                  <Td>{formatDateTime(e.created_at)}</Td>
                  <Td>{kindLabels[e.kind]}</Td>
                  <Td className="max-w-md truncate text-xs text-slate-600">{e.description}</Td>
                  <Td className={`text-right tabular-nums ${e.amount_cents > 0 ? "text-emerald-700" : ""}`}>
                    {e.amount_cents > 0 ? "+" : ""}
                    {formatCents(e.amount_cents)}
                  </Td>
                  <Td className="text-right tabular-nums">{formatCents(e.balance_after_cents ?? 0)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </>
  );
});
