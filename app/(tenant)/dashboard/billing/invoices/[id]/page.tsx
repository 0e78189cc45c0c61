import Link from "next/link";
import { payByCardAction, payFromBalanceAction } from "@/app/_actions/billing";
import { env } from "@/lib/env";
import { stripeConfigFromEnv } from "@/lib/billing/stripe";
import { InvoiceDocument } from "@/components/billing/invoice-document";
import { PrintButton } from "@/components/billing/print-button";
import { InvoiceButton, PayByCardButton } from "@/components/forms/billing-forms";
import { buttonClass } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { getInvoiceOrThrow } from "@/lib/billing/get-invoice";
import { invoiceJson } from "@/lib/billing/invoice-json";
import { balanceOf } from "@/lib/billing/ledger";
import { formatCents } from "@/lib/billing/money";
import { getTenantOrThrow } from "@/lib/tenants/queries";
import { effectiveSettings } from "@/lib/settings/settings";
import { nullIfRefused } from "@/lib/errors";
import { page } from "@/lib/pages/page";
import { BankTransfer } from "@/components/billing/payment-guides";

export const metadata = { title: "Invoice" };

/** The tenant's invoice, and its payment page when Stripe is not configured (pay from the prepaid balance). */
export default page(
  {
    plane: "tenant",
    path: "/dashboard/billing/invoices/[id]",
    ids: ["id"],
    load: async ({ principal: p, ids: { id } }) => {
      const inv = await nullIfRefused(getInvoiceOrThrow(p, id));
      if (!inv) return null;
      const [tenant, balance, settings] = await Promise.all([getTenantOrThrow(p, p.tenantId), balanceOf(p.tenantId), effectiveSettings()]);
      return { inv, tenant, balance, settings };
    },
  },
  ({ ids: { id }, searchParams: sp, data: { inv, tenant, balance, settings } }) => {
    const view = invoiceJson(inv);
    const covers = balance >= view.amount_cents;
    const card = Boolean(stripeConfigFromEnv().secretKey);
    return (
      <>
        <nav aria-label="Breadcrumb" className="mb-4 text-sm text-slate-500 print:hidden">
          <Link href="/dashboard/billing" className="hover:underline">
            Billing
          </Link>{" "}
          / {view.number}
        </nav>
        {sp.paid === "stripe" && view.status === "pending" ? (
          <p role="status" className="mb-4 rounded-md bg-sky-50 px-4 py-2.5 text-sm text-sky-800 print:hidden">
            Stripe is confirming your payment; this page shows it paid as soon as Stripe tells us.
          </p>
        ) : null}
        {view.status === "paid" ? (
          <p role="status" className="mb-4 rounded-md bg-emerald-50 px-4 py-2.5 text-sm text-emerald-800 print:hidden">
            {view.number} is paid (
            {view.payment_method === "balance"
              ? "from your prepaid balance"
              : view.payment_method === "stripe"
                ? "by card through Stripe"
                : "by bank transfer"}
            ). Thank you.
          </p>
        ) : null}
        {view.status === "pending" ? (
          <Card className="mb-6 print:hidden" aria-label="How to pay">
            <CardHeader
              title={`Pay ${formatCents(view.amount_cents)}`}
              description="Choose how to pay; the invoice shows as paid here as soon as the payment is recorded."
            />
            <div className="divide-y divide-slate-100">
              {card ? (
                <div className="flex flex-wrap items-center gap-4 p-5">
                  <PayByCardButton action={payByCardAction} invoiceId={id} />
                  <span className="text-sm text-slate-600">Through Stripe Checkout; confirmed within seconds.</span>
                </div>
              ) : null}
              <div className="flex flex-wrap items-center gap-4 p-5">
                {covers ? (
                  <InvoiceButton
                    action={payFromBalanceAction}
                    invoiceId={id}
                    label={`Pay from balance (${formatCents(balance)})`}
                    variant={card ? "secondary" : "primary"}
                  />
                ) : (
                  <p className="text-sm text-slate-600">
                    Your balance ({formatCents(balance)}) does not cover this invoice
                    {tenant.billingMode === "prepaid" ? (
                      <>
                        :{" "}
                        <Link className="font-medium text-indigo-700 hover:underline" href="/dashboard/billing#add-funds">
                          add funds
                        </Link>
                        , or pay by transfer below.
                      </>
                    ) : card ? (
                      ", so pay by card or by transfer."
                    ) : (
                      ", so pay by transfer."
                    )}
                  </p>
                )}
              </div>
              <div className="p-5">
                <h3 className="mb-3 text-sm font-semibold text-slate-900">By bank transfer</h3>
                <BankTransfer bank={settings.bank} reference={view.number} amountCents={view.amount_cents} demo={env().DEMO_MODE} />
              </div>
            </div>
          </Card>
        ) : null}
        <div className="mb-4 flex flex-wrap gap-3 print:hidden">
          <PrintButton />
          <a className={buttonClass("secondary")} href={`/api/invoices/${id}/csv`} download>
            Download CSV
          </a>
        </div>
        <InvoiceDocument invoice={view} tenantName={tenant.name} billingEmail={tenant.billingEmail} />
      </>
    );
  },
);
