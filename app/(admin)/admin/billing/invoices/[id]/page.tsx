import Link from "next/link";
import { recordBankPaymentAction, refundAction, voidInvoiceAction } from "@/app/_actions/billing";
import { InvoiceDocument } from "@/components/billing/invoice-document";
import { BankPaymentForm, InvoiceButton, RefundForm } from "@/components/forms/billing-forms";
import { buttonClass } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { getInvoiceOrThrow } from "@/lib/billing/get-invoice";
import { invoiceJson } from "@/lib/billing/invoice-json";
import { getTenantOrThrow } from "@/lib/tenants/queries";
import { nullIfRefused } from "@/lib/errors";
import { page } from "@/lib/pages/page";
import { PrintButton } from "@/components/billing/print-button";
import { PaymentLinkStatus } from "@/components/billing/payment-guides";
import { invoiceEmailDelivery } from "@/lib/billing/invoice-email";

export const metadata = { title: "Invoice" };

export default page(
  {
    plane: "operator",
    path: "/admin/billing/invoices/[id]",
    ids: ["id"],
    load: async ({ principal, ids }) => {
      const inv = await nullIfRefused(getInvoiceOrThrow(principal, ids.id));
      if (!inv) return null;
      const [tenant, delivery] = await Promise.all([getTenantOrThrow(principal, inv.tenantId), invoiceEmailDelivery(inv.id)]);
      return { inv, tenant, delivery };
    },
  },
  ({ ids: { id }, data: { inv, tenant, delivery } }) => {
    const view = invoiceJson(inv);
    return (
      <>
        <nav aria-label="Breadcrumb" className="mb-4 text-sm text-slate-500 print:hidden">
          <Link href="/admin/billing" className="hover:underline">
            Billing
          </Link>{" "}
          /{" "}
          <Link href={`/admin/tenants/${tenant.id}`} className="hover:underline">
            {tenant.name}
          </Link>
        </nav>
        <div className="mb-4 flex flex-wrap gap-3 print:hidden">
          <PrintButton />
          <a className={buttonClass("secondary")} href={`/api/invoices/${id}/csv`} download>
            Download CSV
          </a>
        </div>
        <InvoiceDocument invoice={view} tenantName={tenant.name} billingEmail={tenant.billingEmail} />
        {view.status === "pending" ? (
          <Card className="mt-6 print:hidden">
            <CardHeader title="Payment" />
            <div className="space-y-4 p-5">
              {view.payment_url ? <PaymentLinkStatus delivery={delivery} url={view.payment_url} /> : null}
              <BankPaymentForm action={recordBankPaymentAction} invoiceId={id} />
              <InvoiceButton
                action={voidInvoiceAction}
                invoiceId={id}
                label="Void invoice"
                variant="danger"
                confirm={{
                  title: `Void ${view.number}?`,
                  body: "The tenant no longer owes it; its usage returns to the next invoice.",
                  confirmLabel: "Void invoice",
                  keepLabel: "Keep invoice",
                }}
              />
            </div>
          </Card>
        ) : null}
        {view.status === "paid" ? (
          <Card className="mt-6 print:hidden">
            <CardHeader
              title="Refund"
              description="Credit part or all of this invoice back to the tenant's balance. Refunds never add up to more than was paid."
            />
            <div className="p-5">
              <RefundForm action={refundAction} invoiceId={id} />
            </div>
          </Card>
        ) : null}
      </>
    );
  },
);
